/**
 * Progress and summaries of the transfer commands, on stderr. On a terminal that animates: one refreshing line,
 * with a line kept above it for each failed file (every file with `verbose`). Anywhere else (pipes, `CI`,
 * `TERM=dumb`): one plain line per file fetched or failed, and a progress line every 10 s. Unchanged files (a
 * verified copy, already stored) get a line only with `verbose`. When quiet: only failures. Each failure is printed
 * once, when it happens; the end adds the summary and hints. The reporter takes the engine's events and hands the
 * drawing to `ProgressLine`, `FileLines` and `TransferOutcome`.
 */
import { FileLines } from './file-lines.js';
import { type BatchCount, ProgressLine } from './progress-line.js';
import type { ProgressStream } from './status-line.js';
import { TransferOutcome } from './transfer-outcome.js';
import { TransferTally } from './transfer-tally.js';
import type { ReporterOptions, SettledFile, TransferWords } from './transfer-types.js';

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
  private ticker: ReturnType<typeof setInterval> | undefined;
  private readonly batch: BatchCount;
  private readonly tally: TransferTally;
  private readonly outcome = new TransferOutcome();
  private readonly line: ProgressLine;
  private readonly fileLines: FileLines;

  constructor(
    private readonly stream: ProgressStream,
    totalFiles: number,
    private readonly words: TransferWords,
    private readonly options: ReporterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.animate = (options.animate ?? Boolean(stream.isTTY)) && !options.quiet;
    this.tally = new TransferTally(this.started);
    this.batch = { total: totalFiles, settled: 0, failed: 0 };
    this.line = new ProgressLine(
      stream,
      this.tally,
      this.batch,
      words.active,
      options,
      this.started,
      this.now,
    );
    this.fileLines = new FileLines(words, options, this.animate);
    if (options.ticking !== false && !options.quiet) {
      this.ticker = this.animate
        ? setInterval(() => this.line.draw(true), 1000)
        : setInterval(() => this.line.plain(), PLAIN_PROGRESS_MS);
      this.ticker.unref?.();
    }
  }

  /** Sets the number of files once it is known. */
  setTotal(files: number): void {
    this.batch.total = files;
  }

  /** Bytes moved so far for one file, and its size when known. */
  progress(label: string, bytes: number, total?: number): void {
    this.tally.moved(label, bytes, total);
    if (this.animate) this.line.draw(false);
  }

  /** A warning about one file, on a line of its own (quiet or not), above the refreshing line. */
  warn(text: string): void {
    this.line.clear();
    this.stream.write(`Warning: ${text}\n`);
    if (this.animate) this.line.draw(true);
  }

  /** One file waits for another process that is downloading it. */
  waiting(label: string, pid: number): void {
    this.tally.waiting(label, pid);
    if (this.animate) this.line.draw(true);
  }

  /** Bytes of one file read so far to compute its MD5, before it is sent. */
  hashing(label: string, hashed: number, total: number): void {
    this.tally.hashing(label, hashed, total);
    if (this.animate) this.line.draw(false);
  }

  /** One file is settled (done, skipped or failed). */
  settled(file: SettledFile): void {
    const notStarted = TransferOutcome.notStarted(file);
    const failed = !notStarted && this.options.failures.includes(file.status);
    // A failed file's bytes are kept in its part for the next run.
    this.tally.settled(file.label, file.bytes, failed ? (file.kept ?? 0) : 0);
    this.batch.settled += 1;
    let shown = false;
    if (notStarted) {
      this.outcome.countNotStarted(notStarted);
    } else {
      const repeated = this.outcome.count(file, failed);
      this.batch.failed = this.outcome.failed;
      shown = this.fileLines.shows(file, failed, repeated);
      if (shown) {
        this.line.clear();
        this.stream.write(this.fileLines.text(file, failed));
      }
    }
    // The last file settled: the summary follows, so no full bar is drawn in between.
    if (this.batch.settled >= this.batch.total) this.line.clear();
    else if (this.animate) this.line.draw(shown);
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
    this.line.clear();
  }

  /** Clears the progress line and prints the summary (unless quiet), why files were not started, and hints. */
  finish(extra?: string): void {
    this.abandon();
    const elapsedMs = this.now() - this.started;
    const lines = this.outcome.closingLines(this.words, this.tally, elapsedMs, this.options.quiet, extra);
    for (const line of lines) this.stream.write(`${line}\n`);
  }

  /**
   * The text of the refreshing line, at most `width` characters: `Downloading 16/50, 1 failed  33.1/500.0 MiB  6%
   * [#.....]  135.8 MiB/s  3 s left`.
   */
  status(now: number, width: number): string {
    return this.line.status(now, width);
  }
}
