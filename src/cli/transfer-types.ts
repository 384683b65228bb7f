/** What a transfer reporter is told: the words of its kind of transfer, its options, and each settled file. */

/** Words of one kind of transfer, for lines and summaries. */
export interface TransferWords {
  /** `Downloading`, shown on the refreshing line. */
  active: string;
  /** Words of each settled status, e.g. `{ downloaded: 'downloaded', skipped: 'skipped' }`. */
  statuses: Record<string, string>;
}

/** A settled file, as the reporter shows it. */
export interface SettledFile {
  /** What the user recognises the file by (its storage path). */
  label: string;
  status: string;
  bytes: number;
  /** The file's size, when known: more than `bytes` for a file resumed from the bytes an earlier run kept. */
  size?: number | undefined;
  /** For a failed download: the bytes kept in its part file for the next run to resume. */
  kept?: number | undefined;
  /** For skipped or failed files: why. */
  note?: string | undefined;
  error?: Error | undefined;
}

/** Options of a reporter. */
export interface ReporterOptions {
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
  /** Statuses that count as failures (each printed once, with its reason, as it happens). */
  failures: readonly string[];
  /** Statuses given a line of their own on a terminal too; the others are only counted. */
  listed?: readonly string[] | undefined;
  /** Statuses of files left as they were (`skipped`, `exists`): a line only with `verbose`, anywhere. */
  unchanged?: readonly string[] | undefined;
  /** A line for every file on a terminal, whatever its status. */
  verbose?: boolean | undefined;
  /**
   * Whether the line may refresh in place. The command decides it with ora's rule (a TTY, `TERM` not `dumb`,
   * no `CI`; see `canAnimate`); default: the stream is a TTY.
   */
  animate?: boolean | undefined;
  /**
   * Each file is read once to compute its MD5 before it is sent (uploads with `Content-MD5`): the time left
   * counts what is left of both passes, so it does not start over when sending begins.
   */
  hashesFirst?: boolean | undefined;
  /** The batch's abort signal: once it fires, the refreshing line is cleared and not drawn again. */
  signal?: AbortSignal | undefined;
  /** Clock, for tests. */
  now?: () => number;
  /** Redraws on a timer (so a stall shows), and off a terminal prints a line every 10 s; default true. */
  ticking?: boolean | undefined;
}
