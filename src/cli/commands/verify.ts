/**
 * `mission-data verify`: a line per file (`ok`, `corrupt`, `unverifiable`, `extra`, `unreadable`) on stdout,
 * progress and counts on stderr; exit 1 when a file is corrupt (and not repaired), 130 on Ctrl-C with the counts
 * so far.
 */

import type { MissionDataClient } from '../../api.js';
import { countStatuses } from '../../api.js';
import { AbortedError, ExitCode, UsageError } from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { formatBytes, formatPair, formatTimeLeft } from '../format.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { refuseIngestionFilters, requiredFilters } from '../options.js';
import { jsonArrayPieces, linePieces, writeResults } from '../results-out.js';
import { canAnimate, fitStatusLine, RateMeter } from '../status-line.js';

// The report and its progress as the library's entry hands them over.
type VerifyReport = Awaited<ReturnType<MissionDataClient['verify']>>;
type VerifyEntry = VerifyReport['entries'][number];
type VerifyStatus = VerifyEntry['status'];
type VerifyProgress = Parameters<
  NonNullable<NonNullable<Parameters<MissionDataClient['verify']>[1]>['onProgress']>
>[0];

/** The options commander hands to `verify`. */
export interface VerifyCommandOptions extends GlobalOptions, QueryFilters {
  outputFormat?: 'text' | 'json' | undefined;
  repair?: boolean | undefined;
  download?: boolean | undefined;
  notVerifiedSince?: string | undefined;
  strict?: boolean | undefined;
  threads?: number | undefined;
  pageSize?: number | undefined;
}

/** A file's record in `--output-format json`, named as `status`'s (`file_path` can be piped into `download`). */
export interface VerifyRecordJson {
  status: VerifyStatus;
  file_path: string;
  local_path: string;
  algorithm: string | null;
  against: string | null;
  expected: string | null;
  got: string | null;
  reason: string | null;
  repair: 'repaired' | 'failed' | null;
  repair_error: string | null;
}

function jsonRecord(entry: VerifyEntry): VerifyRecordJson {
  return {
    status: entry.status,
    file_path: entry.path,
    local_path: entry.localPath,
    algorithm: entry.algorithm ?? null,
    against: entry.against ?? null,
    expected: entry.expected ?? null,
    got: entry.got ?? null,
    reason: entry.reason ?? null,
    repair: entry.repair?.status ?? null,
    repair_error: entry.repair?.error?.message ?? null,
  };
}

/** `ok <path>`, `corrupt <path> (md5 expected …, got …)`, then `repaired <path>` when it was. */
export function verifyLine(entry: VerifyEntry): string {
  let detail = entry.reason;
  if (entry.status === 'corrupt' && entry.expected !== undefined) {
    const algorithm = entry.algorithm ? `${entry.algorithm} ` : '';
    detail = `${algorithm}expected ${entry.expected}, got ${entry.got}; ${entry.reason}`;
  }
  let line = `${entry.status} ${entry.path}${detail ? ` (${detail})` : ''}\n`;
  if (entry.repair?.status === 'repaired') line += `repaired ${entry.path}\n`;
  else if (entry.repair) line += `not repaired ${entry.path} (${entry.repair.error?.message ?? 'failed'})\n`;
  return line;
}

/** A date of `--not-verified-since`: `YYYYMMDD` (midnight UTC) or anything ISO 8601. */
export function parseSince(value: string): Date {
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  const date = compact ? new Date(`${compact[1]}-${compact[2]}-${compact[3]}T00:00:00Z`) : new Date(value);
  if (Number.isNaN(date.getTime()) || !/^\d{4}/.test(value)) {
    throw new UsageError(`--not-verified-since ${JSON.stringify(value)} is not a date.`, {
      hint: 'Give YYYYMMDD (midnight UTC) or an ISO 8601 date and time, such as 2025-01-31T22:00:00Z.',
    });
  }
  return date;
}

/** `3 ok, 0 corrupt, 1 extra`: ok and corrupt always (what a nightly run looks for), the others when not zero. */
function countsText(counts: Record<VerifyStatus, number>): string {
  const others = (['unverifiable', 'unreadable', 'extra'] as const)
    .filter((status) => counts[status] > 0)
    .map((status) => `, ${counts[status]} ${status}`);
  return `${counts.ok} ok, ${counts.corrupt} corrupt${others.join('')}`;
}

/** The counts, for stderr, in lines of at most 80 columns: the counts, the bytes hashed, what was repaired or left out. */
export function verifySummary(report: VerifyReport, seconds: number): string {
  const counts = countsText(report.counts);
  const hashed = `${formatBytes(report.bytes)} hashed in ${seconds.toFixed(1)} s`;
  const together = `${counts} (${hashed}).`;
  const lines = together.length <= 80 ? [together] : [`${counts}.`, `${hashed}.`];
  const more = [
    report.repaired > 0 ? `${report.repaired} repaired.` : '',
    report.notDue > 0 ? `${report.notDue} verified since the date given, left out.` : '',
  ].filter(Boolean);
  if (more.length > 0) lines.push(more.join(' '));
  return `${lines.join('\n')}\n`;
}

/** True when no file stays corrupt (with `strict`: every file in scope was also compared and read). */
export function verifyPassed(entries: readonly VerifyEntry[], strict: boolean): boolean {
  return entries.every((entry) => {
    if (entry.status === 'corrupt') return entry.repair?.status === 'repaired';
    if (strict) return entry.status === 'ok' || entry.status === 'extra';
    return true;
  });
}

/** The refreshing progress line on a terminal: files, bytes, a bar, rate and time left. */
class VerifyProgressLine {
  readonly #rate = new RateMeter();
  #shown = false;

  constructor(private readonly io: CommandIO) {}

  draw(progress: VerifyProgress): void {
    const now = Date.now();
    this.#rate.add(now, progress.bytesDone);
    const perMs = this.#rate.perMs();
    const left = progress.bytes - progress.bytesDone;
    const tail = perMs
      ? [`${formatBytes(Math.round(perMs * 1000))}/s`, left > 0 ? formatTimeLeft(left / perMs) : '']
      : [];
    const files = `verify ${progress.filesDone}/${progress.files} files`;
    const text = progress.repairing
      ? `repairing ${progress.repairing.path} ${formatBytes(progress.repairing.received)}`
      : fitStatusLine(
          {
            files,
            head: `${files}  ${formatPair(progress.bytesDone, progress.bytes)}`,
            tail: tail.filter(Boolean),
            fraction: progress.bytes > 0 ? progress.bytesDone / progress.bytes : 1,
          },
          (this.io.stderr.columns ?? 80) - 1,
        );
    this.io.stderr.write(`\r\x1b[2K${text}`);
    this.#shown = true;
  }

  clear(): void {
    if (this.#shown) this.io.stderr.write('\r\x1b[2K');
    this.#shown = false;
  }
}

/** Runs `verify`: 0 when no file stays corrupt, 1 when one does (see `verifyPassed`), 130 when cancelled. */
export async function verify(options: VerifyCommandOptions, io: CommandIO): Promise<number> {
  const filters = requiredFilters(options, 'verify --instrument mag');
  refuseIngestionFilters(filters, 'verify');
  const since = options.notVerifiedSince === undefined ? undefined : parseSince(options.notVerifiedSince);
  const client = clientFor(options, io);
  const line = !options.quiet && (await canAnimate(io.stderr)) ? new VerifyProgressLine(io) : undefined;
  const started = Date.now();
  const strict = options.strict === true;
  // A piece at a time, as the reader takes them: over 100,000 files the text is 7 MiB, 39 MiB as JSON.
  const print = (entries: readonly VerifyEntry[]) =>
    writeResults(
      io,
      options.outputFormat === 'json'
        ? jsonArrayPieces(entries, jsonRecord)
        : linePieces(entries, verifyLine),
    );
  try {
    const report = await client.verify(filters, {
      signal: io.signal,
      pageSize: options.pageSize,
      repair: options.repair,
      download: options.download,
      notVerifiedSince: since,
      threads: options.threads,
      onProgress: line ? (progress) => line.draw(progress) : undefined,
    });
    line?.clear();
    await print(report.entries);
    if (!options.quiet) io.stderr.write(verifySummary(report, (Date.now() - started) / 1000));
    return verifyPassed(report.entries, strict) ? ExitCode.Success : ExitCode.Failure;
  } catch (error) {
    line?.clear();
    if (!(error instanceof AbortedError) || !error.results) throw error;
    const entries = (error.results as VerifyEntry[]).sort((a, b) => (a.path < b.path ? -1 : 1));
    await print(entries);
    io.stderr.write(
      `${error.message} ${countsText(countStatuses(entries))} so far; the record keeps what was verified.\n`,
    );
    return error.exitCode;
  } finally {
    line?.clear();
    await client.close();
  }
}
