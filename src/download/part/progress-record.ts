/**
 * When a part's record is written while bytes land: once a connection wrote 4 MiB since the last record (but not
 * within 100 ms of it), or every second, whichever comes first. A run killed (SIGKILL, a lost machine) then leaves
 * a record that names all but the last 4 MiB of each connection (on a link that brings more than that in a tenth
 * of a second, all but that tenth of a second), and the next run fetches only what the record does not name. On
 * loopback a 1 GiB download rewrote its record 256 times (five system calls each, 0.1 s in all); now about ten
 * times a second. The record is replaced atomically (`PartFile.record`); these rules only say when.
 */
import { performance } from 'node:perf_hooks';
import { type HeldBytes, heldBytes, type ObjectState, stateRecord } from './object-state.js';
import type { PartFile } from './part-file.js';

/** A connection writes at most this many bytes the record does not name yet. */
export const RECORD_EVERY_BYTES = 4 * 1024 * 1024;
/** The record is rewritten at least this often while bytes land (on the next write after it). */
export const RECORD_EVERY_MS = 1000;
/** ...and never more often than this (the bytes rule waits for it). */
export const RECORD_GAP_MS = 100;

/** The bytes one connection wrote since the last record. */
export interface RecordLane {
  /** This connection wrote `bytes` more: the record is rewritten when the lane or the clock says so. */
  wrote(bytes: number): void;
}

/** Options of `RecordCadence`, for tests. */
export interface RecordCadenceOptions {
  everyBytes?: number | undefined;
  everyMs?: number | undefined;
  gapMs?: number | undefined;
  /** The clock, in milliseconds. */
  now?: (() => number) | undefined;
}

/**
 * The cadence of one part's record, over any number of connections (`lane()` each): `write` is called once a
 * connection has written `everyBytes` since the last record and `gapMs` have passed since it, or `everyMs` have
 * passed since it and a byte came. Every record names the bytes of every connection, so each one starts all
 * lanes afresh.
 */
export class RecordCadence {
  readonly #write: () => void;
  readonly #everyBytes: number;
  readonly #everyMs: number;
  readonly #gapMs: number;
  readonly #now: () => number;
  #lastAt: number;
  /** A record the bytes rule asked for within the gap, written once the gap is over (if no other came first). */
  #deferred: ReturnType<typeof setTimeout> | undefined;
  /** Counts the records written: a lane's bytes counted before the latest one are already named. */
  #epoch = 0;

  constructor(write: () => void, options: RecordCadenceOptions = {}) {
    this.#write = write;
    this.#everyBytes = options.everyBytes ?? RECORD_EVERY_BYTES;
    this.#everyMs = options.everyMs ?? RECORD_EVERY_MS;
    this.#gapMs = options.gapMs ?? RECORD_GAP_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#lastAt = this.#now();
  }

  /** A new connection's lane. */
  lane(): RecordLane {
    let since = 0;
    let epoch = this.#epoch;
    return {
      wrote: (bytes: number) => {
        if (bytes <= 0) return;
        if (epoch !== this.#epoch) {
          epoch = this.#epoch;
          since = 0;
        }
        since += bytes;
        const elapsed = this.#now() - this.#lastAt;
        if (elapsed >= this.#everyMs || (since >= this.#everyBytes && elapsed >= this.#gapMs)) this.record();
        else if (since >= this.#everyBytes && this.#deferred === undefined) {
          // Written when the gap is over even if no byte comes after these (a stream that hangs here).
          this.#deferred = setTimeout(() => this.record(), this.#gapMs - elapsed);
          this.#deferred.unref?.();
        }
      },
    };
  }

  /** Writes the record now. */
  record(): void {
    clearTimeout(this.#deferred);
    this.#deferred = undefined;
    this.#epoch += 1;
    this.#lastAt = this.#now();
    this.#write();
  }
}

/**
 * Writes the part's record of `state` (and of the bytes `held`, when given); never throws: without it a later
 * run resumes from less, or from the part's length, and the checksum finds any hole. Slower, not wrong.
 */
export function recordQuietly(part: PartFile, state: ObjectState, held?: HeldBytes): void {
  try {
    part.record(stateRecord(state, held));
  } catch {
    // See above.
  }
}

/**
 * The `written` hook of one stream into the part from `state.written`: the record says how far it got, on the
 * cadence above. The part's length says the same, but a single rule for every download is easier to trust.
 */
export function streamRecorder(part: PartFile, state: ObjectState): (position: number) => void {
  let onDisk = state.written;
  const cadence = new RecordCadence(() =>
    recordQuietly(part, state, heldBytes(onDisk, state.finished ?? [])),
  );
  const lane = cadence.lane();
  return (position: number) => {
    const bytes = position - onDisk;
    onDisk = position;
    lane.wrote(bytes);
  };
}
