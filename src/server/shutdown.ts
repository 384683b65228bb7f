/**
 * How a running server stops: with a drain first, when asked (new requests answered 503 while the requests
 * under way finish, within a bound), then it stops listening and ends every connection, waits for the work under
 * way (interrupted uploads being cleaned up) and for background confirmations to stop, then closes the store and
 * the index.
 */
import type { Server } from 'node:http';
import { type Backends, closeBackends } from './backends.js';
import type { Breaker } from './breaker.js';
import type { UploadConfirmer } from './confirmations.js';
import type { Connections } from './connections.js';

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

/**
 * The requests a server is answering, whether it drains (answers new requests 503 before it stops), and
 * whether it stops (cuts what still runs).
 */
export class Requests {
  #running = 0;
  #draining = false;
  #stopping = false;
  #idle: Array<() => void> = [];

  /** True once the server began to drain. */
  get draining(): boolean {
    return this.#draining;
  }

  /** True once the server stops: a request that ends now without its whole answer was cut off by the stop. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Marks the stop. */
  stop(): void {
    this.#stopping = true;
  }

  /** Requests under way (those answered 503 by the drain not counted). */
  get running(): number {
    return this.#running;
  }

  /**
   * Answers one request, counted while it runs and then until `closed` (its response's `close`): a response
   * that called `end()` may still have bytes to send, and the stop must not cut them.
   */
  async run(work: () => Promise<void>, closed: Promise<void>): Promise<void> {
    this.#running += 1;
    try {
      await work();
      await closed;
    } finally {
      this.#running -= 1;
      if (this.#running === 0) for (const done of this.#idle.splice(0)) done();
    }
  }

  /** Begins the drain; resolves once no request runs, or after `boundMs`: true when none was left running. */
  async drain(boundMs: number): Promise<boolean> {
    this.#draining = true;
    if (this.#running === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<true>((done) => this.#idle.push(() => done(true)));
    const late = new Promise<false>((done) => {
      timer = setTimeout(() => done(false), boundMs);
    });
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** What a drain came to. */
export interface DrainReport {
  /** Requests still running when the bound was reached, cut off by the stop (0 when all finished). */
  cut: number;
  /** How long the drain took, in ms. */
  durationMs: number;
}

/** What a server's stop acts on. */
export interface ShutdownParts {
  server: Server;
  /** Servers beside it (`/metrics` on a port of its own), closed with it. */
  extraServers: Server[];
  /** The connections of `server`, for the drain to close those with nothing left to send. */
  connections: Connections;
  requests: Requests;
  work: PendingWork;
  uploads: UploadConfirmer | undefined;
  breaker: Breaker | undefined;
  backends: Backends;
}

/** The stopping of one server, which happens once however often it is asked for. */
export class Shutdown {
  readonly #parts: ShutdownParts;
  #closing: Promise<void> | undefined;
  #draining: Promise<DrainReport> | undefined;

  constructor(parts: ShutdownParts) {
    this.#parts = parts;
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

  /**
   * Drains, then stops: new requests are answered 503 (with `Retry-After` and `Connection: close`) and `/health`
   * says the server is draining, while the requests under way finish, for at most `boundMs`; then `close()`.
   * Every call returns the one drain; a `close()` meanwhile stops at once.
   */
  drain(boundMs: number): Promise<DrainReport> {
    this.#draining ??= (async () => {
      const started = Date.now();
      const { requests, connections } = this.#parts;
      // Idle kept-alive connections are closed now and as answers end, so clients open new ones elsewhere; a
      // connection whose answer still has bytes to send is not idle (see connections.ts).
      const idleCloser = setInterval(() => connections.closeIdle(), 100);
      let cut = 0;
      try {
        connections.closeIdle();
        if (!(await requests.drain(boundMs))) cut = requests.running;
      } finally {
        clearInterval(idleCloser);
      }
      await this.close();
      return { cut, durationMs: Date.now() - started };
    })();
    return this.#draining;
  }

  async #stop(): Promise<void> {
    const { server, extraServers, requests, breaker, work, uploads, backends } = this.#parts;
    for (const extra of extraServers) {
      extra.close();
      extra.closeAllConnections();
    }
    const closed = new Promise<void>((resolvePromise) => {
      if (server.listening) server.close(() => resolvePromise());
      else resolvePromise();
    });
    requests.stop();
    server.closeAllConnections();
    breaker?.stop();
    await closed;
    await work.settled();
    await uploads?.stop();
    await closeBackends(backends);
  }
}
