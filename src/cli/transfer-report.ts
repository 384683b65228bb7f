/** The progress and summary of a download on stderr, as `download` and `sync` both draw them. */
import type { DownloadProgress } from '../api.js';
import type { CommandIO, GlobalOptions } from './io.js';
import { TransferReporter } from './progress.js';

/** What the reporter of a download takes from a command's options. */
export interface DownloadReportOptions extends Pick<GlobalOptions, 'quiet' | 'debug'> {
  /** On a terminal, a line for every file (not only those skipped or failed). */
  verbose?: boolean | undefined;
}

/** One progress event of the download engine, as the reporter shows it. */
export function showDownloadProgress(reporter: TransferReporter, event: DownloadProgress): void {
  if (event.waitingFor !== undefined) reporter.waiting(event.path, event.waitingFor);
  else if (!event.done) reporter.progress(event.path, event.received, event.total);
  else {
    reporter.settled({
      label: event.path,
      status: event.done,
      bytes: event.received,
      size: event.total,
      kept: event.done === 'failed' ? event.received : undefined,
      error: event.error,
    });
  }
}

/** The progress and summary of a download of `files` files, on stderr. */
export function downloadReporter(
  files: number,
  options: DownloadReportOptions,
  io: CommandIO,
  animate: boolean,
): TransferReporter {
  return new TransferReporter(
    io.stderr,
    files,
    {
      active: 'Downloading',
      statuses: {
        downloaded: 'downloaded',
        replaced: 'replaced',
        skipped: 'skipped (verified)',
        failed: 'failed',
      },
    },
    {
      quiet: options.quiet,
      debug: options.debug,
      failures: ['failed'],
      unchanged: ['skipped'],
      verbose: options.verbose,
      animate,
    },
  );
}
