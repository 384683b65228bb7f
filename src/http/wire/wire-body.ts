/** The body of an answer of the wire client, lent from its connection's read buffer (see `connection.ts`). */
import type { AnswerBody } from '../body.js';
import { WireError } from './head.js';

/** The rest of a body that `dump` reads to keep the connection; a longer rest closes it instead. */
const DUMP_LIMIT_BYTES = 256 * 1024;

/** What a body needs of its connection. */
export interface BodySource {
  /** Whether bytes read stay in the buffer while the socket is paused (plain TCP; not TLS). */
  readonly lendsWhilePaused: boolean;
  /** Someone consumes the body now: reading goes on. */
  resume(): void;
  /** What waited in the buffer was taken: an answer read whole is done with. */
  drained(): void;
  /** Whoever held the body gave up on the rest. */
  abandon(): void;
}

/**
 * The body of an answer. Its chunks are views of the connection's read buffer: `consume`'s callback must use
 * each before it returns. Bytes that arrive before anyone consumes are copied aside (and the socket paused).
 */
export class WireBody implements AnswerBody {
  /** Chunks are valid only during the callback that hands them over. */
  readonly transient = true;
  #sink: ((chunk: Buffer) => void) | undefined;
  #held: Buffer[] = [];
  #ended = false;
  #error: unknown;
  #settle: ((error: unknown) => void) | undefined;
  #consumed = false;
  /** Whether `#held` holds views of the connection's buffer (kept intact while the socket is paused). */
  #holdingViews = false;

  constructor(
    private readonly connection: BodySource,
    /** Bytes of the body still to come, when its length is known. */
    private readonly remaining: () => number | undefined,
  ) {}

  /** Hands every byte to `onChunk` in order; resolves to undefined when the body ended whole, or its error. */
  consume(onChunk: (chunk: Buffer) => void): Promise<unknown> {
    if (this.#consumed) return Promise.reject(new Error('a body is consumed once'));
    this.#consumed = true;
    return new Promise((resolve) => {
      this.#settle = resolve;
      const held = this.#held;
      this.#held = [];
      // Bytes that came before the body ended (whole or not) are good; a destroy from `onChunk` stops them.
      const endedBefore = this.#ended;
      for (const chunk of held) {
        if (this.#ended && !endedBefore) break;
        onChunk(chunk);
      }
      this.#holdingViews = false;
      if (this.#ended) {
        resolve(this.#error);
        return;
      }
      this.#sink = onChunk;
      // An answer read whole while it waited for its reader: the connection may serve again (which ends this body).
      this.connection.drained();
      if (!this.#ended) this.connection.resume();
    });
  }

  /** Stops the body; `consume` resolves to `error` (a plain "destroyed" when none). */
  destroy(error?: Error): void {
    if (this.#ended) return;
    this.end(error ?? new WireError('the body was destroyed before its end', 'UND_ERR_ABORTED'));
    this.connection.abandon();
  }

  /** Reads the rest and drops it, so the connection can serve again; closes it instead when much is left. */
  async dump(): Promise<void> {
    if (this.#ended) return;
    if (this.#consumed || (this.remaining() ?? Number.POSITIVE_INFINITY) > DUMP_LIMIT_BYTES) {
      this.destroy();
      return;
    }
    await this.consume(() => undefined);
  }

  /** The whole body as text, at most `limit` bytes (past that `onLonger` is called and the rest dropped). */
  async text(limit: number, onLonger: () => void): Promise<string> {
    const chunks: Buffer[] = [];
    let total = 0;
    let longer = false;
    const error = await this.consume((chunk) => {
      if (total + chunk.length > limit) {
        longer = true;
        this.destroy();
        return;
      }
      total += chunk.length;
      chunks.push(Buffer.from(chunk));
    });
    if (longer) onLonger();
    else if (error !== undefined) throw error;
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * From the connection: bytes of the body (`own`: in the connection's own buffer). Returns false when nobody
   * consumes yet and more is to come (the socket is to pause).
   */
  push(chunk: Buffer, own: boolean): boolean {
    if (this.#ended) return true;
    if (this.#sink) {
      this.#sink(chunk);
      return true;
    }
    // Nobody reads yet: the socket pauses. A plain socket reads nothing more into its buffer meanwhile (and an
    // answer read whole has the next reads land elsewhere), so the bytes stay where they are; TLS may hand over
    // more decrypted bytes in the same turn, and the spare buffer is everyone's, so those bytes are copied.
    if (own && this.connection.lendsWhilePaused) {
      this.#held.push(chunk);
      this.#holdingViews = true;
    } else {
      this.#held.push(Buffer.from(chunk));
    }
    return false;
  }

  /** Whether bytes of the body wait, unread, in the connection's buffer. */
  get holdingViews(): boolean {
    return this.#holdingViews;
  }

  /** From the connection (or `destroy`): the body ended, whole or with `error`. */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#sink = undefined;
    this.#settle?.(error);
  }
}
