/**
 * The body of an answer of the wire client, lent from its connection's read buffer (see `answer-reader.ts`), and
 * its backpressure: the socket reads on only while someone takes the bytes as they come.
 */

import { FAULTS } from '../../core/dispatch-faults.js';
import type { AnswerBody, ReusedBuffer } from '../body.js';
import { WireError } from './head.js';

/** The rest of a body that `dump` reads to keep the connection; a longer rest closes it instead. */
const DUMP_LIMIT_BYTES = 256 * 1024;
/** The first buffer of a body whose length is not stated, doubled as more comes. */
const FIRST_TEXT_BYTES = 16 * 1024;

/** What a body needs of the reader of its connection. */
export interface BodySource {
  /** Whether bytes read stay in the buffer while the socket is paused (plain TCP; not TLS). */
  readonly lendsWhilePaused: boolean;
  /** The body takes bytes again: reading goes on (and with it the idle timer). */
  resume(): void;
  /** What waited in the buffer was taken: an answer read whole is done with. */
  drained(): void;
  /** Whoever held the body gave up on the rest. */
  abandon(): void;
}

/**
 * What takes a body's bytes: each chunk is used (or copied) before the call returns. Returning a promise says
 * the taker is behind (its part file's writes are slow): nothing more comes until the promise settles.
 */
export type ChunkTaker = (chunk: Buffer) => unknown;

/** Whether a taker's answer says it is behind (a callback may return anything else, ignored). */
function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * The body of an answer. Its chunks are views of the connection's read buffer: `consume`'s callback must use
 * each before it returns. The socket is paused (and its idle timer stopped) while nobody takes the bytes: before
 * `consume`, and while its callback's promise is pending; bytes read meanwhile wait in `#held`.
 */
export class WireBody implements AnswerBody {
  #taker: ChunkTaker | undefined;
  /** Bytes read while nobody took them, in order. */
  #held: Buffer[] = [];
  /** Whether `#held` holds views of the connection's buffer (kept intact while the socket is paused). */
  #holdingViews = false;
  /** Whether the taker said it is behind and has not caught up yet. */
  #behind = false;
  #consumed = false;
  /** How the body ended (set once): undefined while it goes on; `{ error: undefined }` when whole. */
  #end: { error: unknown } | undefined;
  /** Whether `consume`'s promise was settled (or the body destroyed): nothing more is handed over. */
  #settled = false;
  #settle: ((error: unknown) => void) | undefined;
  readonly #caughtUp = () => {
    this.#behind = false;
    this.#handOver();
  };

  constructor(
    private readonly source: BodySource,
    /** Bytes of the body still to come, when its length is known. */
    private readonly remaining: () => number | undefined,
  ) {}

  /** Hands every byte to `onChunk` in order; resolves to undefined when the body ended whole, or its error. */
  consume(onChunk: ChunkTaker): Promise<unknown> {
    if (this.#consumed) return Promise.reject(new Error('a body is consumed once'));
    this.#consumed = true;
    return new Promise((resolve) => {
      this.#settle = resolve;
      if (this.#settled) {
        resolve(this.#end?.error);
        return;
      }
      this.#taker = onChunk;
      this.#handOver();
    });
  }

  /** Stops the body: nothing more is handed over; `consume` resolves to `error` (a plain "destroyed" when none). */
  destroy(error?: Error): void {
    if (this.#settled) return;
    this.#end ??= {
      error: error ?? new WireError('the body was destroyed before its end', FAULTS.abandoned),
    };
    this.#held = [];
    this.#holdingViews = false;
    this.#finish();
    this.source.abandon();
  }

  /** Reads the rest and drops it, so the connection can serve again; closes it instead when much is left. */
  async dump(): Promise<void> {
    if (this.#end) return;
    if (this.#consumed || (this.remaining() ?? Number.POSITIVE_INFINITY) > DUMP_LIMIT_BYTES) {
      this.destroy();
      return;
    }
    await this.consume(() => undefined);
  }

  /**
   * The whole body's bytes, at most `limit` (past that `onLonger` is called and the rest dropped): copied into one
   * buffer of the length the answer states (`reuse`'s when given), grown only when more comes (a body of unstated
   * length).
   */
  async bytes(limit: number, onLonger: () => void, reuse?: ReusedBuffer): Promise<Buffer> {
    const room = (bytes: number) => (reuse ? reuse.atLeast(bytes) : Buffer.allocUnsafe(bytes));
    let buffer = room(Math.min(limit, this.remaining() ?? 0) || FIRST_TEXT_BYTES);
    let total = 0;
    let longer = false;
    const error = await this.consume((chunk) => {
      if (total + chunk.length > limit) {
        longer = true;
        this.destroy();
        return;
      }
      if (total + chunk.length > buffer.length) {
        const larger = room(Math.min(limit, Math.max(buffer.length * 2, total + chunk.length)));
        buffer.copy(larger, 0, 0, total);
        buffer = larger;
      }
      chunk.copy(buffer, total);
      total += chunk.length;
    });
    if (longer) onLonger();
    else if (error !== undefined) throw error;
    return buffer.subarray(0, total);
  }

  /**
   * From the reader: bytes of the body (`own`: in the connection's own buffer). Returns false when the socket
   * is to pause: nobody takes them yet, or the taker is behind.
   */
  push(chunk: Buffer, own: boolean): boolean {
    if (this.#end) return true;
    if (this.#taker !== undefined && !this.#behind && this.#held.length === 0) {
      const later = this.#taker(chunk);
      if (later === undefined || !isPromise(later)) return true;
      this.#wait(later);
      return false;
    }
    // The socket pauses. A plain socket reads nothing more into its buffer meanwhile (and an answer read whole
    // has the next reads land elsewhere), so the bytes stay where they are; TLS may hand over more decrypted
    // bytes in the same turn, and the spare buffer is everyone's, so those bytes are copied.
    if (own && this.source.lendsWhilePaused) {
      this.#held.push(chunk);
      this.#holdingViews = true;
    } else {
      this.#held.push(Buffer.from(chunk));
    }
    return false;
  }

  /** Whether bytes of the body wait, untaken, in the connection's buffer. */
  get holdingViews(): boolean {
    return this.#holdingViews;
  }

  /**
   * From the reader: the body ended, whole or with `error`. Bytes that came before it ended are handed over
   * first (they are good: a resume starts after them), then `consume` resolves.
   */
  end(error?: unknown): void {
    if (this.#end) return;
    this.#end = { error };
    if (!this.#behind) this.#handOver();
  }

  /** The taker is behind: reading stops until `later` settles. */
  #wait(later: PromiseLike<unknown>): void {
    this.#behind = true;
    later.then(this.#caughtUp, this.#caughtUp);
  }

  /** Hands what waited to the taker (until it is behind again), then reading goes on or the body settles. */
  #handOver(): void {
    const taker = this.#taker;
    if (taker === undefined || this.#settled) return;
    while (this.#held.length > 0) {
      if (this.#settled) return;
      const later = taker(this.#held.shift() as Buffer);
      if (later !== undefined && isPromise(later)) {
        this.#wait(later);
        return;
      }
    }
    this.#holdingViews = false;
    if (this.#end) {
      this.#finish();
      return;
    }
    // An answer read whole while it waited for its taker: the connection may serve again (which ends this body).
    this.source.drained();
    if (!this.#end) this.source.resume();
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#taker = undefined;
    this.#held = [];
    this.#settle?.(this.#end?.error);
  }
}
