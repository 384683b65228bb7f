/**
 * How a running server stops: it stops listening and ends every connection, waits for the work under way
 * (interrupted uploads being cleaned up) and for background confirmations to stop, then closes the store and
 * the index.
 */
import type { Server } from 'node:http';
import { type Backends, closeBackends } from './backends.js';
import type { Breaker } from './breaker.js';
import type { UploadConfirmer } from './confirmations.js';

/** Work `close()` waits for: each promise is kept until it settles, whether it resolves or rejects. */
export class PendingWork {
  readonly #pending = new Set<Promise<unknown>>();

  /** Keeps `work` until it settles; returns it as it is. */
  track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
    return work;
  }

  /** Resolves once the work kept now has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.#pending);
  }
}

/** The stopping of one server, which happens once however often it is asked for. */
export class Shutdown {
  readonly #server: Server;
  readonly #work: PendingWork;
  readonly #uploads: UploadConfirmer | undefined;
  readonly #backends: Backends;
  readonly #breaker: Breaker | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    server: Server,
    work: PendingWork,
    uploads: UploadConfirmer | undefined,
    backends: Backends,
    breaker?: Breaker,
  ) {
    this.#breaker = breaker;
    this.#server = server;
    this.#work = work;
    this.#uploads = uploads;
    this.#backends = backends;
  }

  /** True once `close()` was called. */
  get started(): boolean {
    return this.#closing !== undefined;
  }

  /** Stops the server; every call returns the one stop. */
  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    const closed = new Promise<void>((resolvePromise) => {
      if (server.listening) server.close(() => resolvePromise());
      else resolvePromise();
    });
    server.closeAllConnections();
    this.#breaker?.stop();
    await closed;
    await this.#work.settled();
    await this.#uploads?.stop();
    await closeBackends(this.#backends);
  }
}
