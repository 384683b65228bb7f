import { createClient, type MissionDataClient } from '../api.js';

/** What a command may use to talk to the user: given by `main.ts`, so commands never touch the process. */
export interface CommandIO {
  /** Results: tables, JSON, CSV. */
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Everything else: progress, warnings, summaries. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Input for `download -`. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM. */
  signal: AbortSignal;
}

/** Options every client command takes. */
export interface GlobalOptions {
  url?: string | undefined;
  apiKey?: string | undefined;
  dataDir?: string | undefined;
  token?: string | undefined;
  /** Retries of a failed request (a whole number, checked with the configuration). */
  retries?: string | undefined;
  /** Seconds without a byte before a transfer counts as stalled. */
  timeout?: string | undefined;
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
}

/** The library client a command works through, set from the global options (`--debug` logs every request). */
export function clientFor(options: GlobalOptions, io: CommandIO): MissionDataClient {
  return createClient({
    url: options.url,
    apiKey: options.apiKey,
    dataDir: options.dataDir,
    token: options.token,
    retries: options.retries,
    timeout: options.timeout,
    log: options.debug ? (line) => io.stderr.write(`debug: ${line}\n`) : undefined,
    onWarning: options.quiet ? undefined : (message) => io.stderr.write(`Warning: ${message}\n`),
  });
}
