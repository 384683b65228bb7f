/** `mission-data upload`: stores local files under the names the naming rules give them. */
import { ExitCode } from '../errors.js';
import { ALREADY_STORED } from '../upload.js';
import { type CommandIO, clientFor, type GlobalOptions } from './io.js';
import { TransferReporter } from './progress.js';

/** Options of `upload`. */
export interface UploadCommandOptions extends GlobalOptions {
  concurrency?: number | undefined;
  /** false with --no-checksum. */
  checksum?: boolean | undefined;
}

/** Uploads the files; returns the exit status (1 when any failed or was stored already). */
export async function upload(paths: string[], options: UploadCommandOptions, io: CommandIO): Promise<number> {
  const client = clientFor(options, io);
  try {
    const reporter = new TransferReporter(
      io.stderr,
      new Set(paths).size,
      {
        active: 'Uploading',
        statuses: { uploaded: 'uploaded', exists: ALREADY_STORED, failed: 'failed' },
        failed: 'not uploaded',
      },
      { quiet: options.quiet, debug: options.debug, failures: ['exists', 'failed'] },
    );
    // Names are checked inside the library before any file is read or any request is made.
    const results = await client.upload(paths, {
      concurrency: options.concurrency,
      checksum: options.checksum !== false,
      signal: io.signal,
      onStart: (files) => reporter.setTotal(files),
      onProgress: (event) => {
        if (!event.done) return reporter.progress(event.key, event.sent);
        reporter.settled({
          label: event.key,
          status: event.done,
          bytes: event.sent,
          note: event.done === 'exists' ? ALREADY_STORED : undefined,
          error: event.error,
        });
      },
    });
    reporter.finish(io.signal.aborted ? 'Interrupted.' : undefined);
    return results.every((result) => result.status === 'uploaded') ? ExitCode.Success : ExitCode.Failure;
  } finally {
    await client.close();
  }
}
