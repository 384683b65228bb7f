/**
 * The signals that close a run of the command line, each with the exit status it ends with. Each cancels the work
 * the same way (the abort runs, locks are released, the record's pending lines written, `serve` drains): a run
 * ended without that leaves its sync lock behind and loses what it had not yet recorded.
 *
 * Imports nothing, so that the error classes can name these too.
 */

/**
 * Each closing signal and its exit status: 128 + its number, as shells report a process it ended (`ExitCode`'s
 * `Interrupted` and `Terminated` are the first two).
 */
export const CLOSING_SIGNALS = {
  /** Ctrl-C. */
  SIGINT: 130,
  /** A service manager's or `kill`'s stop. */
  SIGTERM: 143,
  /** The terminal closed (Unix); the console window closed (Windows, which ends the process about 10 s later). */
  SIGHUP: 129,
  /** Ctrl-Break, Windows only (its number there is 21); elsewhere it is listened for and never comes. */
  SIGBREAK: 149,
} as const satisfies Partial<Record<NodeJS.Signals, number>>;

/** A signal that closes a run. */
export type ClosingSignal = keyof typeof CLOSING_SIGNALS;

/** The closing signals, in the order of the table. */
export const closingSignals = Object.keys(CLOSING_SIGNALS) as ClosingSignal[];
