/**
 * The one line of a batch's progress: on a terminal that animates, redrawn in place (files, bytes of the known
 * total, a bar, percentage, rate and time left; the MD5 pass of an upload shown as such; `stalled N s` once no byte
 * came for a while); anywhere else, the same facts as a plain line every 10 s.
 */
import { formatBytes, formatPair, formatTimeLeft } from './format.js';
import {
  bothPassesLeft,
  fitStatusLine,
  type InFlight,
  type ProgressStream,
  RateMeter,
  waitingFor,
  waitNote,
} from './status-line.js';
import type { TransferTally } from './transfer-tally.js';
import type { ReporterOptions } from './transfer-types.js';

const REFRESH_MS = 100;

/** The files of a batch as the line counts them, kept up to date by the reporter. */
export interface BatchCount {
  total: number;
  settled: number;
  failed: number;
}

/** What the line shows of the bytes: the amount, how far along, the rate and the time left. */
interface Amounts {
  amount: string;
  fraction: number;
  rate: number | undefined;
  remaining: number | undefined;
}

/** Draws the progress line of a batch from its tally and counts, and clears it before other lines. */
export class ProgressLine {
  private lastDraw = Number.NEGATIVE_INFINITY;
  private shown = false;
  private readonly transferRate = new RateMeter();
  private readonly hashRate = new RateMeter();

  constructor(
    private readonly stream: ProgressStream,
    private readonly tally: TransferTally,
    private readonly batch: BatchCount,
    private readonly activeWord: string,
    private readonly options: ReporterOptions,
    private readonly started: number,
    private readonly now: () => number,
  ) {}

  /** Redraws the line in place; unless `force`, at most every 100 ms. */
  draw(force: boolean): void {
    // Once interrupted, the line is not drawn again: what stays is the summary, not a bar of cancelled files.
    if (this.options.signal?.aborted) {
      this.clear();
      return;
    }
    const now = this.now();
    if (!force && now - this.lastDraw < REFRESH_MS) return;
    this.lastDraw = now;
    const width = this.stream.columns !== undefined && this.stream.columns > 1 ? this.stream.columns - 1 : 79;
    let text = this.status(now, width);
    if (text.length > width) text = text.slice(0, width);
    this.stream.write(`\r\u001b[2K${text}`);
    this.shown = true;
  }

  /** Off a terminal: the state of the batch as one plain line, so a long run is not silent in a log. */
  plain(): void {
    if (this.batch.settled >= this.batch.total) return;
    this.stream.write(`${this.status(this.now(), 200)}\n`);
  }

  /** Clears the line, when one is shown, so that another line (or the summary) takes its place. */
  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\u001b[2K');
    this.shown = false;
  }

  /**
   * The text of the line, at most `width` characters: `Downloading 16/50, 1 failed  33.1/500.0 MiB  6%
   * [#.....]  135.8 MiB/s  3 s left`. The bar goes first when room is short, then time left, then the rate.
   */
  status(now: number, width: number): string {
    const active = this.tally.active();
    const hashingOnly = active.length > 0 && active.every((file) => file.hashed !== undefined);
    // An upload's MD5 pass: nothing is sent yet, so the line shows the pass itself instead of a stalled 0 B.
    const word = hashingOnly ? 'Hashing (MD5)' : this.activeWord;
    const { settled, total, failed } = this.batch;
    const files = `${word} ${settled}/${total}${failed > 0 ? `, ${failed} failed` : ''}`;
    const { amount, fraction, rate, ...left } = hashingOnly
      ? this.hashedAmounts(now, active)
      : this.transferredAmounts(now);
    let remaining = left.remaining;
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

  /** The MD5 pass of the files in flight, which all hash before sending. */
  private hashedAmounts(now: number, active: readonly InFlight[]): Amounts {
    const hashed = active.reduce((sum, file) => sum + (file.hashed ?? 0), 0);
    const total = active.reduce((sum, file) => sum + (file.total ?? 0), 0);
    this.hashRate.add(now, this.tally.hashedBytes);
    const rate = this.hashRate.perMs();
    return {
      amount: formatPair(hashed, total),
      fraction: total > 0 ? hashed / total : 0,
      rate,
      remaining: rate ? (total - hashed) / rate : undefined,
    };
  }

  /** The bytes moved, of the batch's total when every size is known; else time left follows the files settled. */
  private transferredAmounts(now: number): Amounts {
    const bytes = this.tally.bytes;
    this.transferRate.add(now, bytes);
    const rate = this.transferRate.perMs();
    const total = this.knownTotalBytes();
    let amounts: Amounts;
    if (total !== undefined && total > 0) {
      const remaining = rate ? (total - bytes) / rate : undefined;
      amounts = { amount: formatPair(bytes, total), fraction: bytes / total, rate, remaining };
    } else {
      const { settled, total: files } = this.batch;
      // Without every size, time left follows the files settled so far.
      const elapsed = now - this.started;
      const remaining = settled > 0 && elapsed > 0 ? (elapsed / settled) * (files - settled) : undefined;
      amounts = { amount: formatBytes(bytes), fraction: files > 0 ? settled / files : 0, rate, remaining };
    }
    if (this.options.hashesFirst) this.hashRate.add(now, this.tally.hashedBytes);
    return amounts;
  }

  private waitNote(active: readonly InFlight[], now: number): string | undefined {
    return waitNote(active, {
      bytes: this.tally.bytes,
      quietMs: this.tally.quietMs(now),
      unfinished: this.batch.settled < this.batch.total,
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
            done: this.tally.bytes,
            perMs: this.transferRate.perMs(),
          },
        );
  }

  /** The bytes of the whole batch, once every file still to come is in flight with a known size. */
  private knownTotalBytes(): number | undefined {
    return this.tally.knownTotal(this.batch.total - this.batch.settled);
  }
}
