/** `mission-data download`: fetches files by name or path, from stdin, or every match of a query. */
import type {
  DownloadOptions,
  DownloadPreview,
  DownloadResult,
  DownloadTargets,
  MatchingDownload,
  MissionDataClient,
} from '../../api.js';
import { transferOverrides } from '../../core/call-settings.js';
import { AbortedError, ExitCode, UsageError } from '../../core/errors.js';
import { hasFilter } from '../../naming/query-params.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { formatBytes } from '../format.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { caseHint, filterFlag, pickFilters, refuseIngestionFilters } from '../options.js';
import type { TransferReporter } from '../progress.js';
import { possiblyCutWarning } from '../query-warnings.js';
import { writeResults } from '../results-out.js';
import { canAnimate } from '../status-line.js';
import { downloadReporter, showDownloadProgress } from '../transfer-report.js';
import { BESIDE_PATHS, namedTargets, refuseVersionOfNamedFiles } from './download-globs.js';
import { expandStdin } from './download-input.js';
import {
  DOWNLOAD_OUTPUT_FORMATS,
  type DownloadOutputFormat,
  downloadResultPieces,
} from './download-output.js';

/** Options of `download`: the global ones, the query filters, and how to transfer. */
export interface DownloadCommandOptions extends GlobalOptions, QueryFilters {
  force?: boolean | undefined;
  /** With query options: only the files `status` lists as missing. */
  onlyMissing?: boolean | undefined;
  /** With query options: what `status` lists (missing files, newer versions of outdated ones, changed ones). */
  update?: boolean | undefined;
  concurrency?: number | undefined;
  /** Print what would be fetched and skipped; fetch nothing. */
  dryRun?: boolean | undefined;
  /** On a terminal, a line for every file (not only those skipped or failed). */
  verbose?: boolean | undefined;
  /** Connections per large file. */
  connections?: number | 'auto' | undefined;
  /** Part size of a large file, in MiB (`--part-size`). */
  partSize?: number | undefined;
  /** What stdout gets: local paths (`paths`, the default off a terminal) or one JSON record per file. */
  outputFormat?: DownloadOutputFormat | undefined;
  /** Fail files the store states no checksum for. */
  requireChecksum?: boolean | undefined;
}

/** Downloads the named files (or every match of the filters); returns the exit status. */
export async function download(
  paths: string[],
  options: DownloadCommandOptions,
  io: CommandIO,
): Promise<number> {
  const filters = checkArguments(paths, options);
  const named = paths.length > 0 ? await expandStdin(paths, io, options.quiet === true) : undefined;
  if (named && named.length === 0) {
    // An empty query piped in (`[]` or nothing) is a nightly run with nothing new, not a mistake.
    if (!options.quiet) io.stderr.write('Nothing to download: stdin held no file paths.\n');
    return ExitCode.Success;
  }
  const client = clientFor(options, io);
  try {
    // A folder of the layout is the query its folders spell; a path inside the data root, its storage path.
    const read = named ? await client.readDownloadTargets(named) : undefined;
    if (read) refuseVersionOfNamedFiles(read, filters.version, paths);
    if (read?.kind === 'folder') Object.assign(filters, read.filters);
    const targets =
      read?.kind === 'files'
        ? await namedTargets(client, read, { quiet: options.quiet, version: filters.version }, io)
        : undefined;
    if (targets?.length === 0) return ExitCode.Success;
    checkSelection(filters, targets, options);
    const results = targets
      ? await downloadNamed(client, targets, options, io)
      : await downloadSelected(client, filters, read, options, io);
    if (!results) return ExitCode.Success;
    // Off a terminal, stdout gets the local path of each file in place (for `| xargs ...`); with
    // --output-format json, anywhere, a record per file.
    const format = options.outputFormat ?? (io.stdout.isTTY ? undefined : 'paths');
    if (format) await writeResults(io, downloadResultPieces(results, format));
    return results.some((result) => result.status === 'failed') || io.signal.aborted
      ? ExitCode.Failure
      : ExitCode.Success;
  } finally {
    await client.close();
  }
}

/** Refuses what the arguments alone make wrong; the query filters given. */
function checkArguments(paths: readonly string[], options: DownloadCommandOptions): QueryFilters {
  if (options.outputFormat !== undefined && !DOWNLOAD_OUTPUT_FORMATS.includes(options.outputFormat)) {
    throw new UsageError(
      `Invalid --output-format ${JSON.stringify(options.outputFormat)}. Choose from ${DOWNLOAD_OUTPUT_FORMATS.join(', ')}.`,
    );
  }
  const filters = pickFilters(options);
  // Beside paths, only the version: it selects among the matches of a glob or a folder.
  const given = Object.keys(filters)
    .filter((name) => name !== BESIDE_PATHS)
    .map((name) => filterFlag(name as keyof QueryFilters));
  if (paths.length > 0 && given.length > 0) {
    throw new UsageError(
      `Give either file names/paths or query options, not both (got paths and ${given.join(', ')}).`,
      { hint: `Beside a glob or a folder, ${filterFlag(BESIDE_PATHS)} selects the version of each match.` },
    );
  }
  if (paths.length === 0 && !hasFilter(filters)) {
    throw new UsageError(
      "Nothing to download: give file names or storage paths, '-' to read them from stdin, or query options " +
        '(such as --instrument mag --data-level l1a) to download every matching file.',
      { hint: 'See mission-data download -h.' },
    );
  }
  return filters;
}

/** Refuses --only-missing and --update where they cannot apply: ingestion filters, or files named one by one. */
function checkSelection(
  filters: QueryFilters,
  targets: readonly string[] | undefined,
  options: DownloadCommandOptions,
): void {
  if (!options.onlyMissing && !options.update) return;
  if (!targets) {
    refuseIngestionFilters(filters, options.update ? 'download --update' : 'download --only-missing');
    return;
  }
  throw new UsageError(
    `${options.update ? '--update' : '--only-missing'} works with query options or a folder, which say what to compare; not with file paths.`,
  );
}

/** Downloads (or, with --dry-run, previews) files named one by one; undefined when previewed. */
async function downloadNamed(
  client: MissionDataClient,
  targets: string[],
  options: DownloadCommandOptions,
  io: CommandIO,
): Promise<DownloadResult[] | undefined> {
  if (options.dryRun) {
    printPreview(await client.previewDownloads(targets, { force: options.force }), io, options);
    return undefined;
  }
  return runDownloads(options, io, (callbacks) =>
    client.download(targets, { ...transferOptions(options, io), ...callbacks }),
  );
}

/**
 * Downloads (or previews) what the filters select; undefined when it was previewed or selected nothing (said on
 * stderr).
 */
async function downloadSelected(
  client: MissionDataClient,
  filters: QueryFilters,
  read: DownloadTargets | undefined,
  options: DownloadCommandOptions,
  io: CommandIO,
): Promise<DownloadResult[] | undefined> {
  // Filter values are checked by the library before the configuration is read or anything is sent.
  const select = options.update ? 'update' : options.onlyMissing ? 'missing' : 'all';
  let cutAt: number | undefined;
  let selected: MatchingDownload | undefined;
  const results = await runDownloads(options, io, async (callbacks) => {
    selected = await client.downloadMatching(filters, {
      ...transferOptions(options, io),
      ...callbacks,
      select,
      dryRun: options.dryRun,
      onPossiblyCut: (returned) => {
        cutAt = returned;
      },
    });
    return selected.results;
  });
  if (cutAt !== undefined) io.stderr.write(possiblyCutWarning(cutAt));
  if (selected && selected.targets.length === 0) {
    if (!options.quiet) sayNothingSelected(select, filters, read, io);
    return undefined;
  }
  if (selected?.previews) {
    printPreview(selected.previews, io, options);
    return undefined;
  }
  return results;
}

/** Why a selection found nothing to download, on stderr. */
function sayNothingSelected(
  select: 'all' | 'missing' | 'update',
  filters: QueryFilters,
  read: DownloadTargets | undefined,
  io: CommandIO,
): void {
  io.stderr.write(
    select === 'all'
      ? read?.kind === 'folder'
        ? `The archive holds no files below ${read.folder}; nothing to download.\n`
        : 'No files match the query; nothing to download.\n'
      : 'Nothing to download: the local copy is in step with the archive.\n',
  );
  const hint = select === 'all' ? caseHint(filters) : undefined;
  if (hint) io.stderr.write(`Hint: ${hint}\n`);
}

/** How the transfer goes, from the command's options: the transfer flags given, in the library's units. */
function transferOptions(options: DownloadCommandOptions, io: CommandIO) {
  return { ...transferOverrides(options), force: Boolean(options.force), signal: io.signal };
}

/** The reporter's hooks a download call takes. */
type ReporterHooks = Required<Pick<DownloadOptions, 'onStart' | 'onProgress'>>;

/**
 * Runs a download with progress on stderr: the reporter starts once the files are known (a selection that
 * finds none, or a preview, reports nothing) and prints the summary at the end.
 */
async function runDownloads(
  options: DownloadCommandOptions,
  io: CommandIO,
  start: (hooks: ReporterHooks) => Promise<DownloadResult[]>,
): Promise<DownloadResult[]> {
  const animate = !options.quiet && (await canAnimate(io.stderr));
  let reporter: TransferReporter | undefined;
  const hooks: ReporterHooks = {
    onStart: (files) => {
      reporter ??= downloadReporter(files, options, io, animate);
      reporter.setTotal(files);
    },
    onProgress: (event) => {
      if (reporter) showDownloadProgress(reporter, event);
    },
  };
  let results: DownloadResult[];
  try {
    results = await start(hooks);
  } catch (error) {
    // A cancelled batch rejects with what it did (the library's one rule for aborts).
    if (!(error instanceof AbortedError) || !error.results) throw error;
    results = error.results as DownloadResult[];
  }
  reporter?.finish(
    io.signal.aborted ? 'Interrupted; run the same command again to resume.' : verificationNote(results),
  );
  return results;
}

/**
 * A dry run's report, on stdout (it is the command's result): one line per file with what would happen, then
 * the counts, in lines within 80 columns; with `--output-format json`, a record per file on stdout and the counts
 * on stderr. Query records carry no size and a ranged GET per file is too much for a preview, so sizes are those
 * of local files only.
 */
function printPreview(
  previews: readonly DownloadPreview[],
  io: CommandIO,
  options: Pick<DownloadCommandOptions, 'outputFormat' | 'quiet'>,
): void {
  const words = {
    fetch: 'would download',
    check: 'would check',
    skip: 'would skip (verified copy)',
    refuse: 'would refuse',
  } as const;
  const count = (action: DownloadPreview['action']) =>
    previews.filter((preview) => preview.action === action).length;
  const checked = count('check');
  const refused = count('refuse');
  const summary = [
    `Dry run: ${count('fetch')} to download, ${checked} to check, ${count('skip')} to skip (verified copies)` +
      `${refused > 0 ? `, ${refused} refused` : ''}.`,
    ...(checked > 0
      ? ['To check: present but not verified; fetched again if different from the store.']
      : []),
    'Nothing was fetched.',
  ].join('\n');
  if (options.outputFormat === 'json') {
    const actions = { fetch: 'download', check: 'check', skip: 'skip', refuse: 'refuse' } as const;
    const records = previews.map((preview) => ({
      file_path: preview.path,
      local_path: preview.localPath,
      action: actions[preview.action],
      local_bytes: preview.localSize ?? null,
      ...(preview.error === undefined ? {} : { error: preview.error }),
    }));
    io.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
    if (!options.quiet) io.stderr.write(`${summary}\n`);
    return;
  }
  const lines = previews.map((preview) => {
    const local = preview.localSize === undefined ? '' : ` (local copy ${formatBytes(preview.localSize)})`;
    const why = preview.error === undefined ? '' : `: ${preview.error}`;
    return `${words[preview.action]} ${preview.path}${local}${why}\n`;
  });
  io.stdout.write(`${lines.join('')}${summary}\n`);
}

/** What the summary says of checksums: how many fetched files were verified, and which could not be. */
export function verificationNote(results: readonly DownloadResult[]): string | undefined {
  const fetched = results.filter((result) => result.status === 'downloaded' || result.status === 'replaced');
  if (fetched.length === 0) return undefined;
  const verified = fetched.filter((result) => result.verified).length;
  const unverified = fetched.length - verified;
  if (unverified === 0 && verified === 1) return "The file was verified against the store's checksum.";
  return unverified === 0
    ? `All ${verified} verified against the store's checksums.`
    : `${verified} verified against the store's checksums; ${unverified} not verified (the store stated no checksum).`;
}
