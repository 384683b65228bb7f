/** `mission-data sync`: keeps the data root in step with the archive for a filter set, once or every DURATION. */
import { isAbsolute, relative, resolve } from 'node:path';
import type { MissionDataClient, SyncFile, SyncResult } from '../../api.js';
import { transferOverrides } from '../../core/call-settings.js';
import {
  AbortedError,
  BusyError,
  ConfigError,
  ExitCode,
  isMissionDataError,
  NOT_ATTEMPTED,
  UsageError,
  ValidationError,
} from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { elideMiddle, fitClauses } from '../fit-width.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { requiredFilters } from '../options.js';
import type { TransferReporter } from '../progress.js';
import { jsonArrayPieces, writeResults } from '../results-out.js';
import { canAnimate } from '../status-line.js';
import { downloadReporter, showDownloadProgress } from '../transfer-report.js';

/** Options of `sync`: the global ones, the query filters, what to keep and how to transfer. */
export interface SyncCommandOptions extends GlobalOptions, QueryFilters {
  /** Every version of each product, not only the newest. */
  allVersions?: boolean | undefined;
  /** Compare the whole selection, noticing held files deleted or changed. */
  full?: boolean | undefined;
  /** Remove the older versions a newer held version supersedes. */
  prune?: boolean | undefined;
  dryRun?: boolean | undefined;
  /** Run again every this many milliseconds until stopped. */
  watch?: number | undefined;
  /** stdout: the local path of each file fetched (the default off a terminal), or JSON. */
  outputFormat?: 'paths' | 'json' | undefined;
  concurrency?: number | undefined;
  connections?: number | 'auto' | undefined;
  /** Part size of a large file, in MiB (`--part-size`). */
  partSize?: number | undefined;
  requireChecksum?: boolean | undefined;
  /** A line for every file; on a terminal, the paths fetched on stdout too. */
  verbose?: boolean | undefined;
}

/** The longest wait between two runs of a watch after failures: the backoff doubles the interval up to this. */
const MAX_BACKOFF_FACTOR = 8;

/** Runs the sync once, or (`--watch`) again and again until stopped; returns the exit status. */
export async function sync(options: SyncCommandOptions, io: CommandIO): Promise<number> {
  const filters = requiredFilters(options, 'sync --instrument mag --data-level l1a');
  if (options.prune && options.allVersions) {
    throw new UsageError(
      '--prune removes older versions, which --all-versions keeps: give one or the other.',
    );
  }
  const client = clientFor(options, io);
  try {
    if (options.watch === undefined) {
      const { status, result } = await syncOnce(client, filters, options, io, false);
      if (options.outputFormat === 'json' && !options.dryRun)
        await writeResults(io, jsonArrayPieces(result, jsonRecord));
      return status;
    }
    return await watch(client, filters, options, options.watch, io);
  } finally {
    await client.close();
  }
}

/** A run every `intervalMs` until the signal; a failed run (a service that is down) waits longer, doubling. */
async function watch(
  client: MissionDataClient,
  filters: QueryFilters,
  options: SyncCommandOptions,
  intervalMs: number,
  io: CommandIO,
): Promise<number> {
  let failures = 0;
  for (let run = 1; !io.signal.aborted; run += 1) {
    let line: string;
    try {
      const { status, summary } = await syncOnce(client, filters, options, io, true);
      failures = status === ExitCode.Success ? 0 : failures + 1;
      line = summary;
    } catch (error) {
      // What a later run cannot mend ends the watch: a usage error, another sync of the same set.
      if (
        !isMissionDataError(error) ||
        error instanceof UsageError ||
        error instanceof ValidationError ||
        error instanceof ConfigError ||
        error instanceof BusyError
      ) {
        throw error;
      }
      failures += 1;
      line = `failed: ${error.message.replace(/\.$/, '')}`;
    }
    if (io.signal.aborted) break;
    const waitMs = intervalMs * Math.min(2 ** Math.max(0, failures - 1), MAX_BACKOFF_FACTOR);
    if (failures > 0) line += `; next run in ${Math.round(waitMs / 1000)} s`;
    const now = new Date().toISOString();
    // On a terminal, a run is one line that does not wrap (the time of day will do), which drops its detail
    // from the end; a log keeps all of it.
    io.stderr.write(
      io.stderr.isTTY
        ? `${fitClauses(`[${now.slice(11, 19)}Z] sync run ${run}: ${line}`, terminalWidth(io.stderr))}\n`
        : `[${now.slice(0, 19)}Z] sync run ${run}: ${line}\n`,
    );
    await pause(waitMs, io.signal);
  }
  return ExitCode.Interrupted;
}

/** Waits `ms`, or until the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) return done();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}

/** The width of a terminal stream (80 when it does not say). */
function terminalWidth(stream: { columns?: number }): number {
  return stream.columns && stream.columns > 0 ? stream.columns : 80;
}

/** A local path as a person reads it: relative to the working folder when that is shorter. */
export function displayPath(path: string, cwd = resolve('.')): string {
  const near = relative(cwd, path);
  return near !== '' && near.length < path.length && !isAbsolute(near) ? near : path;
}

/**
 * One run. stdout: off a terminal, the local path of each file fetched (for `| xargs`); on a terminal, nothing
 * (as `download`: the summary says it), or with `--verbose` those paths relative to the working folder where
 * shorter, each within the width, before the summary; with `--output-format json`, a JSON array of the files
 * considered (under `--watch`, a JSON line per file that changed). A dry run prints what it would do on stdout,
 * as `download --dry-run` does. stderr: progress and the summary, last; under `--watch` on a terminal, only the
 * line per run that `watch` prints.
 */
async function syncOnce(
  client: MissionDataClient,
  filters: QueryFilters,
  options: SyncCommandOptions,
  io: CommandIO,
  watching: boolean,
): Promise<{ status: number; result: SyncFile[]; summary: string }> {
  const { files, outcome, reporter } = await syncWithProgress(client, filters, options, io, watching);
  const failed = files.filter((file) => file.status === 'failed');
  const summary = syncSummary(files, outcome, options);
  const status =
    options.dryRun || (failed.length === 0 && !io.signal.aborted) ? ExitCode.Success : ExitCode.Failure;
  if (options.dryRun) {
    printDryRun(files, summary, options, io, watching);
    return { status, result: files, summary };
  }
  // Results first, then the summary: on a terminal the last line says how the run went.
  reporter?.abandon();
  printResults(files, options, io, watching);
  const interrupted = 'Interrupted; run the same command again to resume.';
  // A watch's own line per run is its summary; it says nothing more.
  if (watching) return { status, result: files, summary };
  if (reporter) reporter.finish(io.signal.aborted ? interrupted : `Sync: ${summary}`);
  else if (!options.quiet) io.stderr.write(`Sync: ${summary}\n`);
  return { status, result: files, summary };
}

/**
 * One sync, its progress on stderr (and, watching with JSON, each file's record on stdout as it settles): its
 * files (those settled so far when interrupted), what it did, and the reporter when one was shown.
 */
async function syncWithProgress(
  client: MissionDataClient,
  filters: QueryFilters,
  options: SyncCommandOptions,
  io: CommandIO,
  watching: boolean,
): Promise<{ files: SyncFile[]; outcome: SyncResult | undefined; reporter: TransferReporter | undefined }> {
  const animate = !options.quiet && !watching && (await canAnimate(io.stderr));
  const jsonLines = watching && options.outputFormat === 'json';
  // A watch on a terminal says one line per run; in a log, a line per file too.
  const perFile = !(watching && io.stderr.isTTY);
  let reporter: TransferReporter | undefined;
  try {
    const outcome = await client.sync(filters, {
      allVersions: options.allVersions,
      full: options.full,
      prune: options.prune,
      dryRun: options.dryRun,
      ...transferOverrides(options),
      signal: io.signal,
      // A stopped watch leaves no part file behind.
      keepParts: !watching,
      onNotice: (message) => io.stderr.write(`Warning: ${message}\n`),
      onStart: (count) => {
        if (count === 0 || !perFile) return;
        reporter = downloadReporter(count, options, io, animate);
      },
      onProgress: (event) => {
        if (reporter) showDownloadProgress(reporter, event);
        // A log appended run after run gets what changed: a verified copy left as it was is no line of it.
        if (event.done && event.done !== 'skipped' && jsonLines) {
          io.stdout.write(
            `${JSON.stringify(jsonRecord({ path: event.path, localPath: event.localPath, status: event.done }))}\n`,
          );
        }
      },
    });
    return { files: outcome.files, outcome, reporter };
  } catch (error) {
    if (!(error instanceof AbortedError) || !error.results) throw error;
    return { files: error.results as SyncFile[], outcome: undefined, reporter };
  }
}

/**
 * The run's files on stdout: watching with JSON, the records not yet written (a file settles only once); off a
 * terminal, the local path of each file fetched; on one (not watching), with `--verbose` only, those paths
 * fitted to its width.
 */
function printResults(
  files: readonly SyncFile[],
  options: SyncCommandOptions,
  io: CommandIO,
  watching: boolean,
) {
  const fetched = files.filter((file) => file.status === 'downloaded' || file.status === 'replaced');
  if (watching && options.outputFormat === 'json') {
    for (const file of files) {
      if (!['downloaded', 'replaced', 'skipped', 'failed'].includes(file.status)) {
        io.stdout.write(`${JSON.stringify(jsonRecord(file))}\n`);
      }
    }
  } else if (options.outputFormat !== 'json') {
    // As `download`: paths asked for by name, or off a terminal.
    if (options.outputFormat === 'paths' || !io.stdout.isTTY)
      io.stdout.write(fetched.map((file) => `${file.localPath}\n`).join(''));
    else if (!watching && options.verbose) {
      const width = terminalWidth(io.stdout);
      io.stdout.write(fetched.map((file) => `${elideMiddle(displayPath(file.localPath), width)}\n`).join(''));
    }
  }
}

/**
 * A dry run's report, in the form of `download --dry-run`'s: on stdout a line per file with what would happen,
 * then the counts; with `--output-format json`, a record per file (`file_path`, `local_path`, `action`) on stdout
 * and the counts on stderr.
 */
function printDryRun(
  files: readonly SyncFile[],
  summary: string,
  options: SyncCommandOptions,
  io: CommandIO,
  watching: boolean,
): void {
  const planned = files.filter((file) => file.status === 'would-download' || file.status === 'would-prune');
  const action = (file: SyncFile) => (file.status === 'would-download' ? 'download' : 'remove');
  if (options.outputFormat === 'json') {
    const records = planned.map((file) => ({
      file_path: file.path,
      local_path: file.localPath,
      action: action(file),
    }));
    io.stdout.write(
      watching
        ? records.map((record) => `${JSON.stringify(record)}\n`).join('')
        : `${JSON.stringify(records, null, 2)}\n`,
    );
    if (!options.quiet && !watching) io.stderr.write(`Sync: ${summary}\n`);
    return;
  }
  const lines = planned.map((file) =>
    file.status === 'would-download'
      ? `would download ${file.path}\n`
      : `would remove ${file.path} (superseded)\n`,
  );
  io.stdout.write(`${lines.join('')}${watching ? '' : `Sync: ${summary}\n`}`);
}

/** The run in one line (without `Sync: `): what was fetched, held, failed, superseded or removed. */
export function syncSummary(
  files: readonly SyncFile[],
  outcome: SyncResult | undefined,
  options: SyncCommandOptions,
): string {
  const count = (...statuses: SyncFile['status'][]) =>
    files.filter((file) => statuses.includes(file.status)).length;
  const parts: string[] = [];
  const fetched = count('downloaded', 'replaced');
  // Files the run never started (it stopped: a full disk, Ctrl-C) are counted apart from those that failed.
  const notStarted = files.filter(
    (file) => file.status === 'failed' && isMissionDataError(file.error) && file.error.code === NOT_ATTEMPTED,
  ).length;
  const failed = count('failed') - notStarted;
  if (options.dryRun) parts.push(`dry run: ${count('would-download')} to fetch, nothing fetched`);
  else parts.push(fetched === 0 && failed + notStarted === 0 ? 'nothing new' : `${fetched} fetched`);
  if (failed > 0) parts.push(`${failed} failed (asked for again next run)`);
  if (notStarted > 0) parts.push(`${notStarted} not started (asked for next run)`);
  const superseded = count('superseded', 'would-prune');
  if (superseded > 0) {
    parts.push(
      options.prune
        ? `${superseded} superseded version${superseded === 1 ? '' : 's'} would be removed`
        : `${superseded} superseded version${superseded === 1 ? '' : 's'} kept (--prune removes them)`,
    );
  }
  const pruned = count('pruned');
  if (pruned > 0) parts.push(`${pruned} superseded version${pruned === 1 ? '' : 's'} removed`);
  const how = outcome
    ? outcome.compared === 'new'
      ? `; asked for files ingested since ${outcome.since}`
      : outcome.firstRun
        ? '; first run'
        : '; compared the whole selection'
    : '';
  return `${parts.join(', ')}${how}.`;
}

/** A file as `--output-format json` prints it. */
function jsonRecord(file: Pick<SyncFile, 'path' | 'localPath' | 'status'>): Record<string, string> {
  return { file_path: file.path, local_path: file.localPath, status: file.status };
}
