/** `mission-data upload`: stores local files under the names the naming rules give them. */
import { ALREADY_STORED, type MissionDataClient, type UploadPreview, type UploadResult } from '../../api.js';
import { AbortedError, ExitCode, isMissionDataError } from '../../core/errors.js';
import { lastSegment } from '../../core/platform-paths.js';
import { nameWarning, parseName } from '../../naming/names.js';
import { formatBytes } from '../format.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { TransferReporter } from '../progress.js';
import { jsonArrayPieces, writeResults } from '../results-out.js';
import { canAnimate } from '../status-line.js';

/** Options of `upload`. */
export interface UploadCommandOptions extends GlobalOptions {
  concurrency?: number | undefined;
  /** false with --no-checksum. */
  checksum?: boolean | undefined;
  /** Check names and find the files; send nothing, ask the service nothing. */
  dryRun?: boolean | undefined;
  /** Upload a file found in a folder that disagrees with its name, by its name. */
  ignoreFolder?: boolean | undefined;
  /** On a terminal, a line for every file (not only those already stored or failed). */
  verbose?: boolean | undefined;
  /** stdout: nothing but a dry run's lines (the default), or a JSON record per file. */
  outputFormat?: 'text' | 'json' | undefined;
}

/**
 * Uploads the files; returns the exit status: 0 when every file is stored (a file the store held already with the
 * same bytes counts as stored, so a re-run of a batch succeeds), 1 when any failed.
 */
export async function upload(paths: string[], options: UploadCommandOptions, io: CommandIO): Promise<number> {
  const client = clientFor(options, io);
  if (!options.quiet) for (const warning of nameWarnings(paths)) io.stderr.write(`Warning: ${warning}\n`);
  try {
    if (options.dryRun) {
      return printPreview(
        await client.previewUploads(paths, { ignoreFolder: options.ignoreFolder }),
        io,
        options,
      );
    }
    const animate = !options.quiet && (await canAnimate(io.stderr));
    const reporter = uploadReporter(new Set(paths).size, options, io, animate);
    const results = await uploadWithProgress(client, paths, options, io, reporter);
    reporter.finish(
      io.signal.aborted
        ? 'Interrupted; run the same command again; files already stored count as done.'
        : undefined,
    );
    if (options.outputFormat === 'json') {
      const record = (result: (typeof results)[number]) => ({
        file_path: result.key,
        local_path: result.localPath,
        status: result.status,
        bytes: result.bytes,
        ...(result.error ? { error: result.error.message } : {}),
      });
      await writeResults(io, jsonArrayPieces(results, record));
    }
    return results.every((result) => result.status !== 'failed') ? ExitCode.Success : ExitCode.Failure;
  } finally {
    await client.close();
  }
}

/**
 * What the naming rules warn about the files' names (a science descriptor of digits only, read as the archive
 * reads it); a name they refuse is left to the upload's own check, which says what is wrong with it.
 */
function nameWarnings(paths: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const path of new Set(paths)) {
    try {
      const warning = nameWarning(parseName(lastSegment(path)));
      if (warning) warnings.push(warning);
    } catch {
      // Refused names are reported by the upload itself, with every problem.
    }
  }
  return warnings;
}

/** The warning of an empty file: `<path> is empty (0 bytes); uploading it as it is.` */
function emptyWarning(localPath: string, action: 'uploading it' | 'it would be uploaded'): string {
  return `${localPath} is empty (0 bytes); ${action} as it is.`;
}

/** The progress and summary of an upload of `files` files, on stderr. */
function uploadReporter(
  files: number,
  options: UploadCommandOptions,
  io: CommandIO,
  animate: boolean,
): TransferReporter {
  return new TransferReporter(
    io.stderr,
    files,
    {
      active: 'Uploading',
      statuses: { uploaded: 'uploaded', exists: ALREADY_STORED, failed: 'failed' },
    },
    {
      quiet: options.quiet,
      debug: options.debug,
      failures: ['failed'],
      unchanged: ['exists'],
      verbose: options.verbose,
      animate,
      hashesFirst: options.checksum !== false,
      signal: io.signal,
    },
  );
}

/** The upload, its progress shown by `reporter`; an interrupted upload gives the results settled so far. */
async function uploadWithProgress(
  client: MissionDataClient,
  paths: readonly string[],
  options: UploadCommandOptions,
  io: CommandIO,
  reporter: TransferReporter,
): Promise<UploadResult[]> {
  // An empty science file is most often one whose writing failed: it is sent, as asked (as `aws s3 cp` and
  // rclone send one), but not in silence.
  const warned = new Set<string>();
  const warnIfEmpty = (key: string, localPath: string, total: number) => {
    if (total !== 0 || warned.has(key)) return;
    warned.add(key);
    reporter.warn(emptyWarning(localPath, 'uploading it'));
  };
  // Names are checked inside the library before any file is read or any request is made.
  return client
    .upload(paths, {
      concurrency: options.concurrency,
      checksum: options.checksum !== false,
      ignoreFolder: options.ignoreFolder,
      signal: io.signal,
      onStart: (files) => reporter.setTotal(files),
      onProgress: (event) => {
        if (event.done) {
          reporter.settled({ label: event.key, status: event.done, bytes: event.sent, error: event.error });
          return;
        }
        // Events before `done` carry the file's size (on `done`, `total` is the bytes sent).
        warnIfEmpty(event.key, event.localPath, event.total);
        if (event.phase === 'hashing') reporter.hashing(event.key, event.hashed ?? 0, event.total);
        else reporter.progress(event.key, event.sent, event.total);
      },
    })
    .catch((error: unknown) => {
      // Interrupted: the results of the files settled so far come with the error, for the summary.
      if (error instanceof AbortedError && error.results) return error.results as UploadResult[];
      // The error is printed on a line of its own, not glued to the progress line.
      reporter.abandon();
      throw error;
    });
}

/**
 * A dry run's report on stdout: each file's storage key and where it was found, or why it cannot be sent, then
 * the counts in lines within 80 columns; with `--output-format json`, a record per file on stdout and the counts
 * on stderr.
 */
function printPreview(
  previews: readonly UploadPreview[],
  io: CommandIO,
  options: Pick<UploadCommandOptions, 'outputFormat' | 'quiet'>,
): number {
  let bytes = 0;
  let missing = 0;
  // Told as the upload itself tells it, on stderr.
  for (const preview of previews) {
    if (preview.localPath !== undefined && preview.size === 0) {
      io.stderr.write(`Warning: ${emptyWarning(preview.localPath, 'it would be uploaded')}\n`);
    }
  }
  const lines = previews.map((preview) => {
    if (preview.localPath === undefined) {
      missing += 1;
      return `cannot upload ${preview.argument}: ${preview.error?.message ?? 'not found'}\n`;
    }
    bytes += preview.size ?? 0;
    return `would upload ${preview.localPath} as ${preview.key} (${formatBytes(preview.size ?? 0)})\n`;
  });
  const ready = previews.length - missing;
  // A path found but not a regular file (a FIFO, a device) is no missing file: counted apart.
  const notFound = previews.filter(
    (preview) => isMissionDataError(preview.error) && preview.error.code === 'E_FILE_NOT_FOUND',
  ).length;
  const unsendable = missing - notFound;
  const summary =
    `Dry run: ${ready} file${ready === 1 ? '' : 's'} (${formatBytes(bytes)}) named and placed as the rules say` +
    `${notFound > 0 ? `, ${notFound} not found` : ''}${unsendable > 0 ? `, ${unsendable} cannot be sent` : ''}.\n` +
    'Nothing was sent; whether the service holds them already is not checked.\n';
  if (options.outputFormat === 'json') {
    const records = previews.map((preview) => ({
      argument: preview.argument,
      file_path: preview.key,
      local_path: preview.localPath ?? null,
      action: preview.localPath === undefined ? 'cannot-upload' : 'upload',
      bytes: preview.size ?? null,
      ...(preview.error ? { error: preview.error.message } : {}),
    }));
    io.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
    if (!options.quiet) io.stderr.write(summary);
  } else {
    io.stdout.write(`${lines.join('')}${summary}`);
  }
  return missing > 0 ? ExitCode.Failure : ExitCode.Success;
}
