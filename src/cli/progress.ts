/**
 * Progress and summaries of the transfer commands, on stderr. On a terminal that animates: one refreshing line
 * (files, bytes of the known total, a bar, percentage, rate and time left; the MD5 pass of an upload shown as
 * such), with a line kept above it for each file skipped or failed (every file with `verbose`). Anywhere else
 * (pipes, `CI`, `TERM=dumb`): one plain line per file. When quiet: only failures. Each failure is printed once,
 * when it happens; the end adds the summary, the files a stopped batch left alone, and hints.
 */
import { isMissionDataError, NOT_ATTEMPTED } from '../core/errors.js';
import { formatBar, formatBytes, formatDuration, formatPair, formatRate, formatTimeLeft } from './format.js';
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
  /** Statuses that count as failures (each printed once, with its reason, as it happens). */
  failures: readonly string[];
  /** Statuses given a line of their own on a terminal too (e.g. `skipped`); the others are only counted. */
  listed?: readonly string[] | undefined;
  /** A line for every file on a terminal, whatever its status. */
  verbose?: boolean | undefined;
  /**
   * Whether the line may refresh in place. The command decides it with ora's rule (a TTY, `TERM` not `dumb`,
   * no `CI`; see `canAnimate`); default: the stream is a TTY.
   */
  animate?: boolean | undefined;
  /** Clock, for tests. */
  now?: () => number;
}

const REFRESH_MS = 100;
/** Rate and time left are measured over this much recent time, so they follow a link that speeds up or stalls. */
const RATE_WINDOW_MS = 5000;
const BAR_MAX = 30;
const BAR_MIN = 10;
/**
 * Whether a refreshing line may be drawn on `stream`: ora's own rule (its `isEnabled` default: a TTY, `TERM`
 * not `dumb`, no `CI` variable), asked of ora itself so the spinner of `query` and the transfer line agree.
 * ora is loaded only for a TTY: pipes never pay for it.
 */
export async function canAnimate(stream: ProgressStream): Promise<boolean> {
  if (!stream.isTTY) return false;
  const { default: ora } = await import('ora');
  return ora({ stream: stream as NodeJS.WritableStream }).isEnabled;
}

/** Bytes per second over the last few seconds, from samples of a running count. */
class RateMeter {
  private readonly samples: Array<{ at: number; count: number }> = [];

  add(at: number, count: number): void {
    this.samples.push({ at, count });
    while (this.samples.length > 2 && at - (this.samples[0]?.at ?? at) > RATE_WINDOW_MS) this.samples.shift();
  }

  /** Bytes per ms, or undefined before there is a span to measure over. */
  perMs(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at - first.at < 200) return undefined;
    return (last.count - first.count) / (last.at - first.at);
  }
}

interface InFlight {
  /** Bytes transferred so far. */
  bytes: number;
  /** Size of the file, when known. */
  total: number | undefined;
  /** Bytes hashed so far, while the file's MD5 is being computed (uploads). */
  hashed: number | undefined;
}

/**
 * Follows a batch of transfers and renders them. Call `progress` (or `hashing`) as work is done, `settled` once
 * per file and `finish` at the end.
 */
export class TransferReporter {
  private readonly started: number;
  private readonly now: () => number;
  private readonly animate: boolean;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly counts = new Map<string, number>();
  private readonly hints = new Set<string>();
  /** Files never attempted because the batch stopped: summed up in one line, not listed. */
  private notAttempted = 0;
  private notAttemptedWhy: string | undefined;
  private failedCount = 0;
  private settledBytes = 0;
  private settledFiles = 0;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private lineShown = false;
  private readonly transferRate = new RateMeter();
  private readonly hashRate = new RateMeter();

  constructor(
    private readonly stream: ProgressStream,
    private totalFiles: number,
    private readonly words: TransferWords,
    private readonly options: ReporterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.animate = (options.animate ?? Boolean(stream.isTTY)) && !options.quiet;
  }

  /** Sets the number of files once it is known. */
  setTotal(files: number): void {
    this.totalFiles = files;
  }

  /** Bytes moved so far for one file, and its size when known. */
  progress(label: string, bytes: number, total?: number): void {
    if (!this.animate) return;
    this.inFlight.set(label, { bytes, total: total ?? this.inFlight.get(label)?.total, hashed: undefined });
    this.draw(false);
  }

  /** Bytes of one file read so far to compute its MD5, before it is sent. */
  hashing(label: string, hashed: number, total: number): void {
    if (!this.animate) return;
    this.inFlight.set(label, { bytes: 0, total, hashed });
    this.draw(false);
  }

  /** One file is settled (done, skipped or failed). */
  settled(file: SettledFile): void {
    this.inFlight.delete(file.label);
    this.settledFiles += 1;
    this.settledBytes += file.bytes;
    this.counts.set(file.status, (this.counts.get(file.status) ?? 0) + 1);
    if (isMissionDataError(file.error) && file.error.code === NOT_ATTEMPTED) {
      this.notAttempted += 1;
      this.notAttemptedWhy ??= file.error.message.replace(/^not attempted: /, '');
      if (this.animate) this.draw(this.settledFiles === this.totalFiles);
      return;
    }
    const failed = this.options.failures.includes(file.status);
    if (failed) {
      this.failedCount += 1;
      const hint = commandLineHint(file.error);
      if (hint) this.hints.add(hint);
    }
    const shown = this.animate
      ? failed || this.options.verbose || (this.options.listed ?? []).includes(file.status)
      : failed || !this.options.quiet;
    if (shown) {
      this.clearLine();
      // On a terminal the file's name stands for its storage path (the path follows from the name), so the kept
      // lines stay within 80 columns; pipes and logs get the whole path.
      const label = this.animate ? file.label.slice(file.label.lastIndexOf('/') + 1) : file.label;
      this.stream.write(`${this.line({ ...file, label })}\n`);
      if (failed && this.options.debug && file.error?.stack) this.stream.write(`${file.error.stack}\n`);
    }
    if (this.animate) this.draw(shown || this.settledFiles === this.totalFiles);
  }

  /** Total bytes moved so far. */
  get bytes(): number {
    let bytes = this.settledBytes;
    for (const file of this.inFlight.values()) bytes += file.bytes;
    return bytes;
  }

  /** Clears the progress line and prints the summary (unless quiet), the files not attempted, and hints. */
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
    const left = this.notAttempted;
    if (left > 0) {
      this.stream.write(
        `Stopped: ${left} file${left === 1 ? '' : 's'} not attempted, as ${this.notAttemptedWhy ?? 'the batch stopped'}.\n`,
      );
    }
    for (const hint of this.hints) this.stream.write(`Hint: ${hint}\n`);
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
    const width = this.stream.columns !== undefined && this.stream.columns > 1 ? this.stream.columns - 1 : 79;
    let text = this.status(now, width);
    if (text.length > width) text = text.slice(0, width);
    this.stream.write(`\r\u001b[2K${text}`);
    this.lineShown = true;
  }

  /**
   * The text of the refreshing line, at most `width` characters: `Downloading 16/50, 1 failed  33.1/500.0 MiB  6%
   * [#.....]  135.8 MiB/s  3 s left`. The bar goes first when room is short, then time left, then the rate.
   */
  status(now: number, width: number): string {
    const active = [...this.inFlight.values()];
    const hashingOnly = active.length > 0 && active.every((file) => file.hashed !== undefined);
    // An upload's MD5 pass: nothing is sent yet, so the line shows the pass itself instead of a stalled 0 B.
    const word = hashingOnly ? 'Hashing (MD5)' : this.words.active;
    const files = `${word} ${this.settledFiles}/${this.totalFiles}${this.failedCount > 0 ? `, ${this.failedCount} failed` : ''}`;
    let amount: string;
    let fraction: number;
    let rate: number | undefined;
    let remaining: number | undefined;
    if (hashingOnly) {
      const hashed = active.reduce((sum, file) => sum + (file.hashed ?? 0), 0);
      const total = active.reduce((sum, file) => sum + (file.total ?? 0), 0);
      this.hashRate.add(now, hashed);
      amount = formatPair(hashed, total);
      fraction = total > 0 ? hashed / total : 0;
      rate = this.hashRate.perMs();
      remaining = rate ? (total - hashed) / rate : undefined;
    } else {
      const bytes = this.bytes;
      this.transferRate.add(now, bytes);
      rate = this.transferRate.perMs();
      const total = this.knownTotalBytes();
      if (total !== undefined && total > 0) {
        amount = formatPair(bytes, total);
        fraction = bytes / total;
        remaining = rate ? (total - bytes) / rate : undefined;
      } else {
        amount = formatBytes(bytes);
        fraction = this.totalFiles > 0 ? this.settledFiles / this.totalFiles : 0;
        // Without every size, time left follows the files settled so far.
        const elapsed = now - this.started;
        remaining =
          this.settledFiles > 0 && elapsed > 0
            ? (elapsed / this.settledFiles) * (this.totalFiles - this.settledFiles)
            : undefined;
      }
    }
    const head = `${files}  ${amount}  ${Math.floor(Math.min(1, fraction) * 100)}%`;
    const tail = [
      rate !== undefined && rate > 0 ? `${formatBytes(Math.round(rate * 1000))}/s` : undefined,
      remaining !== undefined && fraction < 1 ? formatTimeLeft(remaining) : undefined,
    ].filter((part): part is string => part !== undefined);
    for (let keep = tail.length; keep >= 0; keep -= 1) {
      const after = keep > 0 ? `  ${tail.slice(0, keep).join('  ')}` : '';
      const room = width - head.length - after.length - 3;
      if (room >= BAR_MIN) return `${head} ${formatBar(fraction, Math.min(BAR_MAX, room))}${after}`;
      if (head.length + after.length <= width) return `${head}${after}`;
    }
    return head.length <= width ? head : files;
  }

  /** The bytes of the whole batch, once every file still to come is in flight with a known size. */
  private knownTotalBytes(): number | undefined {
    if (this.settledFiles + this.inFlight.size < this.totalFiles) return undefined;
    let total = this.settledBytes;
    for (const file of this.inFlight.values()) {
      if (file.total === undefined) return undefined;
      total += file.total;
    }
    return total;
  }

  private clearLine(): void {
    if (!this.lineShown) return;
    this.stream.write('\r\u001b[2K');
    this.lineShown = false;
  }
}
