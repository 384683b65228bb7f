/**
 * Progress and summaries of the transfer commands, on stderr: one refreshing line on a terminal, one line per
 * file otherwise, nothing but errors when quiet.
 */
import { isMissionDataError, NOT_ATTEMPTED } from '../errors.js';
import { commandLineHint } from './hints.js';

/** Where progress goes (the command's stderr). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Words of one kind of transfer, for lines and summaries. */
export interface TransferWords {
  /** `Downloading`, shown on the refreshing line. */
  active: string;
  /** Words of each settled status, e.g. `{ downloaded: 'downloaded', skipped: 'skipped' }`. */
  statuses: Record<string, string>;
  /** Heading of the list of failures, after the count: `failed` in `2 files failed:`. */
  failed?: string;
}

/** A settled file, as the reporter shows it. */
export interface SettledFile {
  /** What the user recognises the file by (its storage path). */
  label: string;
  status: string;
  bytes: number;
  /** For skipped or failed files: why. */
  note?: string | undefined;
  error?: Error | undefined;
}

/** Options of a reporter. */
export interface ReporterOptions {
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
  /** Statuses that count as failures (listed with their reasons at the end). */
  failures: readonly string[];
  /** Clock, for tests. */
  now?: () => number;
}

const REFRESH_MS = 100;
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `1536` -> `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** `1234` -> `1.2 s`; `75000` -> `1 min 15 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Bytes per second, e.g. `12.3 MiB/s`. */
export function formatRate(bytes: number, ms: number): string {
  return `${formatBytes(ms > 0 ? Math.round((bytes * 1000) / ms) : 0)}/s`;
}

/**
 * Follows a batch of transfers and renders them. Call `progress` as bytes move, `settled` once per file and
 * `finish` at the end (it prints the summary and the failures with their reasons).
 */
export class TransferReporter {
  private readonly started: number;
  private readonly now: () => number;
  private readonly tty: boolean;
  private readonly inFlight = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  private readonly failed: SettledFile[] = [];
  /** Failed files that were never attempted (the service could not be reached): summed up, not listed. */
  private readonly notAttempted: SettledFile[] = [];
  private settledBytes = 0;
  private settledFiles = 0;
  private lastDraw = 0;
  private lineShown = false;

  constructor(
    private readonly stream: ProgressStream,
    private totalFiles: number,
    private readonly words: TransferWords,
    private readonly options: ReporterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.tty = Boolean(stream.isTTY) && !options.quiet;
  }

  /** Sets the number of files once it is known. */
  setTotal(files: number): void {
    this.totalFiles = files;
  }

  /** Bytes moved so far for one file. */
  progress(label: string, bytes: number): void {
    if (!this.tty) return;
    this.inFlight.set(label, bytes);
    this.draw(false);
  }

  /** One file is settled (done, skipped or failed). */
  settled(file: SettledFile): void {
    this.inFlight.delete(file.label);
    this.settledFiles += 1;
    this.settledBytes += file.bytes;
    this.counts.set(file.status, (this.counts.get(file.status) ?? 0) + 1);
    const neverAttempted = isMissionDataError(file.error) && file.error.code === NOT_ATTEMPTED;
    if (neverAttempted) this.notAttempted.push(file);
    else if (this.options.failures.includes(file.status)) this.failed.push(file);
    if (this.tty) {
      this.draw(this.settledFiles === this.totalFiles);
    } else if (!this.options.quiet && !neverAttempted) {
      this.stream.write(`${this.line(file)}\n`);
    }
  }

  /** Total bytes moved so far. */
  get bytes(): number {
    let bytes = this.settledBytes;
    for (const value of this.inFlight.values()) bytes += value;
    return bytes;
  }

  /** Clears the progress line and prints the summary (unless quiet) and every failure with its reason. */
  finish(extra?: string): void {
    this.clearLine();
    const elapsed = this.now() - this.started;
    if (!this.options.quiet) {
      const parts = Object.entries(this.words.statuses).map(
        ([status, word]) => `${this.counts.get(status) ?? 0} ${word}`,
      );
      const bytes = this.settledBytes;
      const rate = bytes > 0 ? ` (${formatRate(bytes, elapsed)})` : '';
      this.stream.write(
        `${parts.join(', ')}; ${formatBytes(bytes)} in ${formatDuration(elapsed)}${rate}.${extra ? ` ${extra}` : ''}\n`,
      );
    }
    const count = this.failed.length + this.notAttempted.length;
    if (count === 0) return;
    this.stream.write(`${count} file${count === 1 ? '' : 's'} ${this.words.failed ?? 'failed'}:\n`);
    const hints = new Set<string>();
    for (const file of this.failed) {
      this.stream.write(`  ${file.label}: ${file.note ?? file.error?.message ?? 'failed'}\n`);
      const hint = commandLineHint(file.error);
      if (hint) hints.add(hint);
      if (this.options.debug && file.error?.stack) this.stream.write(`${file.error.stack}\n`);
    }
    const left = this.notAttempted.length;
    if (left > 0) {
      this.stream.write(
        `  ${this.failed.length > 0 ? 'and ' : ''}${left} file${left === 1 ? '' : 's'} not attempted: the service could not be reached.\n`,
      );
    }
    for (const hint of hints) this.stream.write(`Hint: ${hint}\n`);
  }

  private line(file: SettledFile): string {
    const word = this.words.statuses[file.status] ?? file.status;
    if (this.options.failures.includes(file.status)) {
      const reason = file.note ?? file.error?.message ?? 'failed';
      return reason === word ? `${word} ${file.label}` : `${word} ${file.label}: ${reason}`;
    }
    const size = file.bytes > 0 ? ` (${formatBytes(file.bytes)})` : '';
    return `${word} ${file.label}${size}${file.note ? ` (${file.note})` : ''}`;
  }

  private draw(force: boolean): void {
    const now = this.now();
    if (!force && now - this.lastDraw < REFRESH_MS) return;
    this.lastDraw = now;
    const bytes = this.bytes;
    const failed = this.failed.length > 0 ? `, ${this.failed.length} failed` : '';
    let text = `${this.words.active} ${this.settledFiles}/${this.totalFiles} files${failed}  ${formatBytes(bytes)}  ${formatRate(bytes, now - this.started)}`;
    const width = this.stream.columns;
    if (width !== undefined && width > 1 && text.length >= width) text = text.slice(0, width - 1);
    this.stream.write(`\r\u001b[2K${text}`);
    this.lineShown = true;
  }

  private clearLine(): void {
    if (!this.lineShown) return;
    this.stream.write('\r\u001b[2K');
    this.lineShown = false;
  }
}
