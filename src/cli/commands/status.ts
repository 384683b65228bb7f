/**
 * `mission-data status`: how the local data root differs from the archive; exit 1 when a file of the archive is
 * missing, outdated or changed (extra files too with `--strict`).
 */

import type { MissionDataClient } from '../../api.js';
import { ExitCode } from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { refuseIngestionFilters, requiredFilters } from '../options.js';
import { jsonArrayPieces, linePieces, writeResults } from '../results-out.js';
import { rootMissingNotice } from '../root-notice.js';

// The report as the library's entry hands it over: the command line reaches the engines through api.ts only.
type StatusReport = Awaited<ReturnType<MissionDataClient['status']>>;
type StatusEntry = StatusReport['entries'][number];

/** How `status` prints: a line per file, or a JSON array of entries. */
export type StatusFormat = 'text' | 'json';

/** The options commander hands to `status`. */
export interface StatusCommandOptions extends GlobalOptions, QueryFilters {
  outputFormat?: StatusFormat | undefined;
  pageSize?: number | undefined;
  /** Extra files count against being in step too (exit 1). */
  strict?: boolean | undefined;
}

/** A file's record in `--output-format json`, named as `download`'s (`file_path` can be piped into it). */
export interface StatusRecord {
  status: StatusEntry['status'];
  file_path: string;
  local_path: string | null;
  newer: string | null;
  reason: string | null;
}

function statusRecord(entry: StatusEntry): StatusRecord {
  return {
    status: entry.status,
    file_path: entry.path,
    local_path: entry.localPath ?? null,
    newer: entry.newer ?? null,
    reason: entry.reason ?? null,
  };
}

/**
 * True when the data root holds the archive's files as they should be: nothing missing, outdated or changed.
 * Extra files are listed but leave it in step unless `strict` (as `rsync`'s extras are left alone without
 * `--delete`), so `status || download --update` stops once the archive's files are in place.
 */
export function holdsArchive(report: StatusReport, strict: boolean): boolean {
  const { counts } = report;
  return counts.missing + counts.outdated + counts.changed === 0 && (!strict || counts.extra === 0);
}

/** One line of the text output: `missing <path>`, `outdated <path> (the archive has v01-01)`, ... */
export function statusLine(entry: StatusEntry): string {
  return `${entry.status} ${entry.path}${entry.reason ? ` (${entry.reason})` : ''}\n`;
}

/** The kinds of difference, in the order the counts line names them. */
const DIFFERENCES = ['missing', 'outdated', 'extra', 'changed'] as const;

/**
 * The counts, for stderr, each line within 80 columns: the differences found (a kind none has is left out:
 * `3 missing, 2 changed.`), then how many of the archive's current files are here, and how many local files could
 * not be compared. `--output-format json` lists every entry these count.
 */
export function statusSummary(report: StatusReport, strict = false): string {
  const { counts } = report;
  // The archive's current files (the latest version of each product and day), not every version it keeps.
  const current = `${report.currentFiles} current ${report.currentFiles === 1 ? 'file' : 'files'} in the archive`;
  const extrasOnly = !report.inStep && holdsArchive(report, strict);
  const lines: string[] = [];
  if (report.inStep || extrasOnly) {
    lines.push(`In step: ${current}, ${report.currentFiles === 1 ? 'here' : 'all here'}.`);
  } else {
    const found = DIFFERENCES.filter((kind) => counts[kind] > 0).map((kind) => `${counts[kind]} ${kind}`);
    lines.push(
      `${found.length > 0 ? found.join(', ') : 'No difference'}.`,
      `${current}, ${report.currentHere} here.`,
    );
  }
  if (report.unrecorded > 0) {
    const one = report.unrecorded === 1;
    lines.push(
      `${report.unrecorded} local ${one ? 'file' : 'files'} not downloaded by mission-data: ` +
        `${one ? 'its' : 'their'} bytes not compared.`,
    );
  }
  if (extrasOnly) {
    lines.push(
      `${counts.extra} extra ${counts.extra === 1 ? 'file' : 'files'} here, listed above; --strict counts extra files.`,
    );
  }
  return lines.map((line) => `${line}\n`).join('');
}

/** Runs `status`: a line per difference on stdout, counts on stderr; 0 when in step (see `holdsArchive`), 1 when not. */
export async function status(options: StatusCommandOptions, io: CommandIO): Promise<number> {
  const filters = requiredFilters(options, 'status --instrument mag --start-date 20250101');
  refuseIngestionFilters(filters, 'status');
  const client = clientFor(options, io);
  try {
    const report = await client.status(filters, { signal: io.signal, pageSize: options.pageSize });
    if (report.rootMissing && !options.quiet)
      io.stderr.write(rootMissingNotice((await client.config()).dataDir));
    await writeResults(
      io,
      options.outputFormat === 'json'
        ? jsonArrayPieces(report.entries, statusRecord)
        : linePieces(report.entries, statusLine),
    );
    const strict = options.strict === true;
    if (!options.quiet) io.stderr.write(statusSummary(report, strict));
    return holdsArchive(report, strict) ? ExitCode.Success : ExitCode.Failure;
  } finally {
    await client.close();
  }
}
