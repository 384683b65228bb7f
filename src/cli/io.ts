import { createClient, type MissionDataClient } from '../api.js';
import { type ClientSetting, isClientSetting, SETTINGS } from '../core/settings.js';

/** What a command may use to talk to the user: given by `main.ts`, so commands never touch the process. */
export interface CommandIO {
  /** Results: tables, JSON, CSV. */
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Everything else: progress, warnings, summaries. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Input for `download -`. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Aborted on a closing signal (`core/signals.ts`): Ctrl-C, SIGTERM, SIGHUP, Ctrl-Break. */
  signal: AbortSignal;
}

/** Options every client command takes: each client setting as its flag's text (checked with the configuration). */
export type GlobalOptions = { [Entry in ClientSetting as Entry['key']]?: string | undefined } & {
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
};

/** The library client a command works through, set from the global options (`--debug` logs every request). */
export function clientFor(options: GlobalOptions, io: CommandIO): MissionDataClient {
  const settings: Record<string, string> = {};
  for (const spec of SETTINGS) {
    const value = (options as Record<string, unknown>)[spec.key];
    if (typeof value === 'string' && isClientSetting(spec)) settings[spec.key] = value;
  }
  return createClient({
    ...settings,
    log: options.debug ? (line) => io.stderr.write(`debug: ${line}\n`) : undefined,
    onWarning: options.quiet ? undefined : (message) => io.stderr.write(`Warning: ${message}\n`),
  });
}
