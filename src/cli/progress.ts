/**
 * Progress and summaries of the transfer commands, on stderr. On a terminal that animates: one refreshing line
 * (files, bytes of the known total, a bar, percentage, rate and time left; the MD5 pass of an upload shown as
 * such; `stalled N s` once no byte came for a while), with a line kept above it for each failed file (every file
 * with `verbose`). Anywhere else (pipes, `CI`, `TERM=dumb`): one plain line per file fetched or failed, and a
 * progress line every 10 s. Unchanged files (a verified copy, already stored) get a line only with `verbose`.
 * When quiet: only failures. Each failure is printed once, when it happens; the end adds the summary and hints.
 */
import { AbortedError, isMissionDataError, NOT_ATTEMPTED } from '../core/errors.js';
import { formatBytes, formatPair, formatTimeLeft } from './format.js';
import { commandLineHint } from './hints.js';
import {
  bothPassesLeft,
  fitStatusLine,
  type InFlight,
  type ProgressStream,
  RateMeter,
  waitingFor,
  waitNote,
} from './status-line.js';
import { summaryLines } from './summary.js';
import { TransferTally } from './transfer-tally.js';
import type { ReporterOptions, SettledFile, TransferWords } from './transfer-types.js';

const REFRESH_MS = 100;
/** How often a line that does not refresh (a pipe, a log) reports progress. */
export const PLAIN_PROGRESS_MS = 10_000;
/**
 * Follows a batch of transfers and renders them. Call `progress` (or `hashing`) as work is done, `settled` once
 * per file and `finish` at the end.
 */
export class TransferReporter {
  private readonly started: number;
  private readonly now: () => number;
  private readonly animate: boolean;
  private readonly counts = new Map<string, number>();
  private readonly hints = new Set<string>();
  /** Files never attempted because the batch stopped: summed up in one line, not listed. */
  private notAttempted = 0;
  private notAttemptedWhy: string | undefined;
  private failedCount = 0;
  private dataRootFailureShown = false;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private settledFiles = 0;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private lineShown = false;
  private readonly transferRate = new RateMeter();
  private readonly hashRate = new RateMeter();
  private readonly tally: TransferTally;

  constructor(
    private readonly stream: ProgressStream,
    private totalFiles: number,
    private readonly words: TransferWords,
    private readonly options: ReporterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.animate = (options.animate ?? Boolean(stream.isTTY)) && !options.quiet;
    this.tally = new TransferTally(this.started);
    if (options.ticking !== false && !options.quiet) {
      this.ticker = this.animate
        ? setInterval(() => this.draw(true), 1000)
        : setInterval(() => this.plainProgress(), PLAIN_PROGRESS_MS);
      this.ticker.unref?.();
    }
  }

  /** Sets the number of files once it is known. */
  setTotal(files: number): void {
    this.totalFiles = files;
  }

  /** Bytes moved so far for one file, and its size when known. */
  progress(label: string, bytes: number, total?: number): void {
    this.tally.moved(label, bytes, total);
    if (this.animate) this.draw(false);
  }

  /** A warning about one file, on a line of its own (quiet or not), above the refreshing line. */
  warn(text: string): void {
    this.clearLine();
    this.stream.write(`Warning: ${text}\n`);
    if (this.animate) this.draw(true);
  }

  /** One file waits for another process that is downloading it. */
  waiting(label: string, pid: number): void {
    this.tally.waiting(label, pid);
    if (this.animate) this.draw(true);
  }

  /** Bytes of one file read so far to compute its MD5, before it is sent. */
  hashing(label: string, hashed: number, total: number): void {
    this.tally.hashing(label, hashed, total);
    if (this.animate) this.draw(false);
  }

  /** One file is settled (done, skipped or failed). */
  settled(file: SettledFile): void {
    const notStarted =
      isMissionDataError(file.error) && file.error.code === NOT_ATTEMPTED ? file.error : undefined;
    const failed = !notStarted && this.options.failures.includes(file.status);
    // A failed file's bytes are kept in its part for the next run.
    this.tally.settled(file.label, file.bytes, failed ? (file.kept ?? 0) : 0);
    this.settledFiles += 1;
    if (notStarted) {
      // Counted apart from failures; a cancellation says why in the closing note, not here.
      this.notAttempted += 1;
      if (!(notStarted.cause instanceof AbortedError)) {
        this.notAttemptedWhy ??= notStarted.message.replace(/^not attempted: /, '');
      }
      if (this.settledFiles >= this.totalFiles) this.clearLine();
      else if (this.animate) this.draw(false);
      return;
    }
    this.counts.set(file.status, (this.counts.get(file.status) ?? 0) + 1);
    if (failed) {
      this.failedCount += 1;
      const hint = commandLineHint(file.error);
      if (hint) this.hints.add(hint);
    }
    // A full or read-only data root fails every file in flight the same way: its cause is told once.
    const dataRootFailure =
      failed &&
      isMissionDataError(file.error) &&
      (file.error.code === 'E_DATA_ROOT' || file.error.code === 'E_NO_SPACE');
    const repeated = dataRootFailure && this.dataRootFailureShown;
    if (dataRootFailure) this.dataRootFailureShown = true;
    const unchanged = (this.options.unchanged ?? []).includes(file.status);
    // Quiet, an interruption says itself by the exit status alone: a file it cut short is no failure to report.
    const cutShort = this.options.quiet && file.error instanceof AbortedError;
    // On a terminal, a file cut short says so in a word, so its line stays within the terminal's width.
    const note = this.animate && file.error instanceof AbortedError ? 'interrupted' : file.note;
    const shown =
      repeated || cutShort
        ? false
        : failed ||
          (unchanged
            ? Boolean(this.options.verbose) && !this.options.quiet
            : this.animate
              ? this.options.verbose || (this.options.listed ?? []).includes(file.status)
              : !this.options.quiet);
    if (shown) {
      this.clearLine();
      // On a terminal the file's name stands for its storage path (the path follows from the name), so the kept
      // lines stay within 80 columns; pipes and logs get the whole path.
      const label = this.animate ? file.label.slice(file.label.lastIndexOf('/') + 1) : file.label;
      this.stream.write(`${this.line({ ...file, label, note })}\n`);
      if (failed && this.options.debug && file.error?.stack) this.stream.write(`${file.error.stack}\n`);
    }
    // The last file settled: the summary follows, so no full bar is drawn in between.
    if (this.settledFiles >= this.totalFiles) this.clearLine();
    else if (this.animate) this.draw(shown);
  }

  /** Total bytes moved so far. */
  get bytes(): number {
    return this.tally.bytes;
  }

  /** Bytes of the files that failed, kept in their part files for a resume. */
  get bytesKept(): number {
    return this.tally.keptBytes;
  }

  /** Stops refreshing and clears the line, for a batch that ends with an error of its own instead of a summary. */
  abandon(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.clearLine();
  }

  /** Clears the progress line and prints the summary (unless quiet), why files were not started, and hints. */
  finish(extra?: string): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.clearLine();
    const lines = summaryLines({
      statuses: this.words.statuses,
      counts: this.counts,
      notStarted: this.notAttempted,
      notStartedWhy: this.notAttemptedWhy,
      bytes: this.tally.settledBytes,
      keptBytes: this.tally.keptBytes,
      elapsedMs: this.now() - this.started,
    });
    // Quiet keeps only why files were left alone: the counts are the summary proper.
    const shown = this.options.quiet ? lines.filter((line) => line.startsWith('Stopped:')) : lines;
    if (extra && !this.options.quiet) shown.push(extra);
    for (const line of shown) this.stream.write(`${line}\n`);
    for (const hint of this.hints) this.stream.write(`Hint: ${hint}\n`);
  }

  /** Off a terminal: the state of the batch as one plain line, so a long run is not silent in a log. */
  private plainProgress(): void {
    if (this.settledFiles >= this.totalFiles) return;
    this.stream.write(`${this.status(this.now(), 200)}\n`);
  }

  private line(file: SettledFile): string {
    const word = this.words.statuses[file.status] ?? file.status;
    if (this.options.failures.includes(file.status)) {
      const reason = withoutName(file.note ?? file.error?.message ?? 'failed', file.label);
      return reason === word ? `${word} ${file.label}` : `${word} ${file.label}: ${reason}`;
    }
    // A resumed file says so, and how much of it came in this run (`resumed: 854.0 MiB of 2.0 GiB fetched`).
    const size =
      file.size !== undefined && file.size > file.bytes
        ? ` (resumed: ${formatBytes(file.bytes)} of ${formatBytes(file.size)} fetched)`
        : file.bytes > 0
          ? ` (${formatBytes(file.bytes)})`
          : '';
    return `${word} ${file.label}${size}${file.note ? ` (${file.note})` : ''}`;
  }

  private draw(force: boolean): void {
    // Once interrupted, the line is not drawn again: what stays is the summary, not a bar of cancelled files.
    if (this.options.signal?.aborted) {
      this.clearLine();
      return;
    }
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
    const active = this.tally.active();
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
      this.hashRate.add(now, this.tally.hashedBytes);
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
      if (this.options.hashesFirst) this.hashRate.add(now, this.tally.hashedBytes);
    }
    // Until the sending has a rate, the MD5 pass tells its own time left, as such.
    let toHash = false;
    if (this.options.hashesFirst) {
      const both = this.bothPassesLeft();
      toHash = both === undefined && hashingOnly && remaining !== undefined;
      if (!toHash) remaining = both;
    }
    const head = `${files}  ${amount}  ${Math.floor(Math.min(1, fraction) * 100)}%`;
    const tail = [
      rate !== undefined && rate > 0 ? `${formatBytes(Math.round(rate * 1000))}/s` : undefined,
      this.waitNote(active, now) ??
        (remaining !== undefined && fraction < 1
          ? `${formatTimeLeft(remaining)}${toHash ? ' to hash' : ''}`
          : undefined),
    ].filter((part): part is string => part !== undefined);
    // While another process holds the file, why nothing moves is what the line must keep.
    const pid = waitingFor(active);
    const kept =
      pid === undefined
        ? undefined
        : {
            long: `waiting for process ${pid} that is downloading the same file`,
            short: `waiting for process ${pid}`,
          };
    return fitStatusLine({ files, head, tail, fraction, kept }, width);
  }

  private waitNote(active: readonly InFlight[], now: number): string | undefined {
    return waitNote(active, {
      bytes: this.bytes,
      quietMs: this.tally.quietMs(now),
      unfinished: this.settledFiles < this.totalFiles,
    });
  }

  /** Time left of an upload that hashes each file before sending it (see `bothPassesLeft`). */
  private bothPassesLeft(): number | undefined {
    const total = this.knownTotalBytes();
    return total === undefined
      ? undefined
      : bothPassesLeft(
          total,
          { done: this.tally.hashedBytes, perMs: this.hashRate.perMs() },
          {
            done: this.bytes,
            perMs: this.transferRate.perMs(),
          },
        );
  }

  /** The bytes of the whole batch, once every file still to come is in flight with a known size. */
  private knownTotalBytes(): number | undefined {
    return this.tally.knownTotal(this.totalFiles - this.settledFiles);
  }

  private clearLine(): void {
    if (!this.lineShown) return;
    this.stream.write('\r\u001b[2K');
    this.lineShown = false;
  }
}

/**
 * A failure's message without the file's name at its head, which the line already gives: `upload <key>: ` goes,
 * and a PUT to a URL naming the file keeps its method and host (`PUT http://host: 403 …`).
 */
function withoutName(reason: string, label: string): string {
  const name = label.split(/[\\/]/).pop() ?? label;
  if (name === '') return reason;
  const head = /^(upload|PUT) (\S+): /.exec(reason);
  if (!head?.[2]?.includes(name)) return reason;
  const rest = reason.slice(head[0].length);
  if (head[1] === 'upload') return rest;
  try {
    return `${head[1]} ${new URL(head[2]).origin}: ${rest}`;
  } catch {
    return `${head[1]}: ${rest}`;
  }
}
