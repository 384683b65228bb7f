/**
 * The body of an answer, whichever client received it, under one contract: a chunk is valid only during the call
 * that hands it over (the wire client's are views of its connection's read buffer; undici's are its own buffers,
 * which the contract does not promise), so a taker uses or copies each before returning.
 */
import type { Readable } from 'node:stream';
import { streamModule } from '../core/on-first-use.js';

/** An answer's body: consumed once, dumped, or destroyed. */
export interface AnswerBody {
  /**
   * Hands every byte to `onChunk`, in order, as it arrives (each chunk valid only during the call); resolves to
   * undefined when the body ended whole, or to the error that ended it early (a drop, a stall, `destroy`). Called
   * once. Backpressure: a promise returned by `onChunk` says the taker is behind; nothing more comes, and the idle
   * timer does not run, until it settles.
   */
  consume(onChunk: (chunk: Buffer) => unknown): Promise<unknown>;
  /** Stops the body (closing its connection when bytes were still to come); `consume` resolves to `error`. */
  destroy(error?: Error): void;
  /** Reads the rest and drops it, so the connection can serve another request. */
  dump(): Promise<void>;
  /**
   * The whole body's bytes, reading at most `limit`: past that `onLonger` is called and the rest dropped. With
   * `reuse`, they are read into its buffer where the client can (a view of it is returned).
   */
  bytes(limit: number, onLonger: () => void, reuse?: ReusedBuffer): Promise<Buffer>;
}

/**
 * A buffer lent to one body after another: the pages of one query, read one at a time, each taken (its records
 * parsed) before the next is asked for. One buffer for them all, rather than one each that only a full
 * collection frees. Reading into it ends whatever was read into it before.
 */
export class ReusedBuffer {
  #buffer = Buffer.alloc(0);

  /** A buffer of at least `bytes`: the one lent before when it is long enough, its contents then overwritten. */
  atLeast(bytes: number): Buffer {
    if (this.#buffer.length < bytes) this.#buffer = Buffer.allocUnsafeSlow(bytes);
    return this.#buffer;
  }
}

/** An answer as the transport hands it over: status, headers (lower-case names) and the body to read. */
export interface SentAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: AnswerBody;
}

/** Whether a taker's answer says it is behind. */
function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** undici's body (a Readable with `dump`) as an `AnswerBody`. */
export function readableBody(readable: Readable & { dump?: () => Promise<unknown> }): AnswerBody {
  return {
    consume(onChunk) {
      return new Promise((resolve) => {
        const take = (chunk: Buffer) => {
          const behind = onChunk(chunk);
          if (!isPromise(behind)) return;
          // A paused stream pauses undici's parser, whose body timeout does not run meanwhile.
          readable.pause();
          const resume = () => {
            if (!readable.destroyed) readable.resume();
          };
          behind.then(resume, resume);
        };
        readable.on('data', take);
        // `finished` also hears a body that ended or was destroyed before these listeners were added.
        streamModule().finished(readable, (error) => {
          readable.off('data', take);
          resolve(error === undefined || error === null ? undefined : (readable.errored ?? error));
        });
      });
    },
    destroy(error) {
      // Destroying makes undici emit an error, which nobody needs to hear.
      readable.on('error', () => undefined);
      readable.destroy(error);
    },
    async dump() {
      if (readable.dump) await readable.dump().catch(() => undefined);
      else readable.destroy();
    },
    async bytes(limit, onLonger) {
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of readable as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > limit) {
          readable.destroy();
          onLonger();
          break;
        }
        chunks.push(chunk);
      }
      return Buffer.concat(chunks);
    },
  };
}

/** Drops a body that is not wanted. */
export function discardBody(body: AnswerBody): void {
  body.destroy();
}
