/**
 * What a batch of transfers has moved, apart from how it is shown: the files in flight with their bytes (or the
 * bytes hashed before sending), the bytes of files settled and of those kept for a resume, and when the count
 * last grew. `progress.ts` draws from it.
 */
import type { InFlight } from './status-line.js';

export class TransferTally {
  readonly #inFlight = new Map<string, InFlight>();
  #settledBytes = 0;
  #keptBytes = 0;
  #hashedBytes = 0;
  #lastBytes = 0;
  #lastByteAt: number;

  constructor(started: number) {
    this.#lastByteAt = started;
  }

  /** Bytes moved so far for one file, and its size when known (kept from before when not given). */
  moved(label: string, bytes: number, total?: number): void {
    this.#inFlight.set(label, { bytes, total: total ?? this.#inFlight.get(label)?.total, hashed: undefined });
  }

  /** One file waits for another process that is downloading it. */
  waiting(label: string, pid: number): void {
    const file = this.#inFlight.get(label);
    this.#inFlight.set(label, {
      bytes: file?.bytes ?? 0,
      total: file?.total,
      hashed: undefined,
      waitingFor: pid,
    });
  }

  /** Bytes of one file read so far to compute its MD5, before it is sent. */
  hashing(label: string, hashed: number, total: number): void {
    this.#hashedBytes += Math.max(0, hashed - (this.#inFlight.get(label)?.hashed ?? 0));
    this.#inFlight.set(label, { bytes: 0, total, hashed });
  }

  /** One file is over: its bytes count as settled, `kept` of them left in its part for the next run. */
  settled(label: string, bytes: number, kept = 0): void {
    this.#inFlight.delete(label);
    this.#settledBytes += bytes;
    this.#keptBytes += kept;
  }

  /** The files in flight. */
  active(): InFlight[] {
    return [...this.#inFlight.values()];
  }

  /** Total bytes moved so far. */
  get bytes(): number {
    let bytes = this.#settledBytes;
    for (const file of this.#inFlight.values()) bytes += file.bytes;
    return bytes;
  }

  get settledBytes(): number {
    return this.#settledBytes;
  }

  /** Bytes of the files that failed, kept in their part files for a resume. */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** Bytes hashed so far in the whole batch. */
  get hashedBytes(): number {
    return this.#hashedBytes;
  }

  /** How long no byte has come, at `now`. */
  quietMs(now: number): number {
    const bytes = this.bytes;
    if (bytes !== this.#lastBytes) {
      this.#lastBytes = bytes;
      this.#lastByteAt = now;
    }
    return now - this.#lastByteAt;
  }

  /** The bytes of the whole batch, once every one of the `unsettled` files is in flight with a known size. */
  knownTotal(unsettled: number): number | undefined {
    if (this.#inFlight.size < unsettled) return undefined;
    let total = this.#settledBytes;
    for (const file of this.#inFlight.values()) {
      if (file.total === undefined) return undefined;
      total += file.total;
    }
    return total;
  }
}
