/**
 * One HTTP/1.1 connection of the wire client, plain or TLS: the socket's life and the request. Its answers are
 * read by its `AnswerReader` (`answer-reader.ts`), which owns the read buffer, the phase, the framing and the idle
 * timer. A body is sent from a source read synchronously into two buffers that take turns. One exchange at a time;
 * after a whole answer with keep-alive, the connection goes back to its pool.
 */
import type { Socket } from 'node:net';
import { listenForAbort } from '../../core/abort-hub.js';
import { FAULTS } from '../../core/dispatch-faults.js';
import { netModule, tlsModule } from '../../core/on-first-use.js';
import { AnswerReader, type ReaderHost } from './answer-reader.js';
import { requestHead, WireError } from './head.js';
import { sendBuffers, sendUpload } from './send-upload.js';
import {
  abortError,
  type WireAnswer,
  type WireRequest,
  type WireTimeouts,
  type WireUpload,
} from './types.js';

/** What the pool does with a connection: takes it back when it may serve again, forgets it when it closed. */
export interface ConnectionOwner {
  release(connection: WireConnection): void;
  forget(connection: WireConnection): void;
}

/** The request in progress: who waits for its head, and what may abort it. */
interface Exchange {
  /** The request as failures name it (`GET /path`). */
  shown: string;
  head: { resolve: (answer: WireAnswer) => void; reject: (error: unknown) => void } | undefined;
  /** Stops listening for the request's abort. */
  unlisten: (() => void) | undefined;
}

/** A connection of the wire client (see the file's comment). */
export class WireConnection {
  readonly #socket: Socket;
  readonly #reader: AnswerReader;
  readonly #owner: ConnectionOwner;
  #sendBuffers: [Buffer, Buffer] | undefined;
  #connected = false;
  #closed = false;
  #exchange: Exchange | undefined;
  /** Requests this connection carried. */
  requests = 0;
  /** When it went back to the pool, and how long the server keeps it (ms). */
  idleSince = 0;
  keepAliveMs: number | undefined;
  readonly origin: string;

  private constructor(url: URL, timeouts: WireTimeouts, owner: ConnectionOwner) {
    this.origin = url.origin;
    this.#owner = owner;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const tls = url.protocol === 'https:';
    const port = Number(url.port) || (tls ? 443 : 80);
    this.#reader = new AnswerReader(this.#readerHost(), timeouts.timeoutMs, !tls);
    const onread = this.#reader.onread;
    this.#socket = tls
      ? tlsModule().connect({
          host,
          port,
          ...(netModule().isIP(host) ? {} : { servername: host }),
          ALPNProtocols: ['http/1.1'],
          // Node's TLS sockets take `onread` as its TCP sockets do; its types leave it out.
          ...({ onread, noDelay: true } as Record<string, unknown>),
        })
      : netModule().connect({ host, port, onread, noDelay: true });
    this.#reader.attach(this.#socket);
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('end', () => this.#onEnd());
    this.#socket.on('close', () => this.#onEnd());
  }

  /** Opens a connection to `url`'s origin; rejects with the socket's error, a timeout, or the abort. */
  static open(
    url: URL,
    timeouts: WireTimeouts,
    owner: ConnectionOwner,
    signal?: AbortSignal,
  ): Promise<WireConnection> {
    const connection = new WireConnection(url, timeouts, owner);
    const socket = connection.#socket;
    return new Promise((resolve, reject) => {
      let unlisten: (() => void) | undefined;
      const done = (error?: unknown) => {
        clearTimeout(timer);
        unlisten?.();
        socket.off('error', done);
        socket.off(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
        if (error === undefined) {
          connection.#connected = true;
          resolve(connection);
        } else {
          connection.#closed = true;
          socket.destroy();
          reject(error);
        }
      };
      const connected = () => done();
      const onAbort = () => done(abortError(signal));
      const timer = setTimeout(
        () => done(new WireError(`connect timeout (${timeouts.timeoutMs} ms)`, FAULTS.connectTimeout)),
        timeouts.timeoutMs,
      );
      socket.once('error', done);
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
      // Through the hub: a transfer over 64 connections opens them at once, each listening to one signal.
      if (signal?.aborted) onAbort();
      else if (signal) unlisten = listenForAbort(signal, onAbort);
    });
  }

  /** Whether the connection is open and between exchanges. */
  get idle(): boolean {
    return this.#connected && !this.#closed && this.#reader.idle;
  }

  /** Sends a request; resolves once the answer's head is read (its body then follows on `body`). */
  exchange(request: WireRequest): Promise<WireAnswer> {
    if (!this.idle) return Promise.reject(new Error('connection busy or closed'));
    const head = requestHead(request.method, request.url, request.headers, request.upload?.size);
    return new Promise((resolve, reject) => {
      if (request.signal?.aborted) {
        reject(abortError(request.signal));
        return;
      }
      const { signal } = request;
      const exchange: Exchange = {
        shown: `${request.method} ${request.url.pathname}`,
        head: { resolve, reject },
        unlisten: signal && listenForAbort(signal, () => this.#fail(abortError(signal))),
      };
      this.requests += 1;
      this.#exchange = exchange;
      this.#reader.begin(request.method, request.upload === undefined);
      this.#socket.ref();
      this.#socket.write(head, 'latin1');
      if (request.upload) void this.#send(request.upload, exchange);
    });
  }

  /**
   * Whether the last exchange got no byte of an answer (a kept-alive connection closed meanwhile): only such a
   * request may be sent again. Kept after the exchange failed, for the pool to ask.
   */
  unanswered(): boolean {
    return !this.#reader.answered;
  }

  /** Closes the connection (between exchanges, or giving up on one). */
  close(): void {
    this.#fail(new WireError('the connection was closed', FAULTS.closed));
  }

  /** What the reader tells: made once per connection. */
  #readerHost(): ReaderHost {
    return {
      answered: (answer, keepAliveMs) => {
        const exchange = this.#exchange as Exchange;
        this.keepAliveMs = keepAliveMs;
        const { resolve } = exchange.head as NonNullable<Exchange['head']>;
        exchange.head = undefined;
        resolve(answer);
      },
      whole: () => {
        const exchange = this.#exchange;
        exchange?.unlisten?.();
      },
      finished: (reusable) => {
        this.#exchange = undefined;
        if (reusable) {
          this.#socket.unref();
          this.idleSince = Date.now();
          this.#owner.release(this);
        } else {
          this.#closed = true;
          this.#socket.destroy();
          this.#owner.forget(this);
        }
      },
      failed: (error) => this.#fail(error),
    };
  }

  /** Sends an upload's bytes after the head (see `send-upload.ts`); an answer that comes first stops it. */
  async #send(upload: WireUpload, exchange: Exchange): Promise<void> {
    this.#sendBuffers ??= sendBuffers();
    const current = () => this.#exchange === exchange;
    try {
      const whole = await sendUpload(
        this.#socket,
        upload,
        this.#sendBuffers,
        () => !current() || this.#reader.answered,
        () => this.#reader.wrote(),
      );
      if (whole && current()) this.#reader.sentWhole();
    } catch (error) {
      if (current()) this.#fail(error);
    }
  }

  #onEnd(): void {
    if (this.#reader.onEnd()) return;
    const exchange = this.#exchange;
    const at = this.#reader.waitingFor;
    if (exchange === undefined || at === undefined) {
      this.#fail(new WireError('other side closed', FAULTS.closed));
      return;
    }
    const when =
      at === 'body'
        ? 'during the body'
        : this.#reader.answered
          ? "after part of the answer's head"
          : 'before any answer';
    this.#fail(new WireError(`other side closed ${when} (${exchange.shown})`, FAULTS.closed));
  }

  /** Ends the connection; an exchange in progress fails with `error` (its head's promise, or its body). */
  #fail(error: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    this.#owner.forget(this);
    const exchange = this.#exchange;
    this.#exchange = undefined;
    exchange?.unlisten?.();
    this.#reader.close(error);
    exchange?.head?.reject(error);
  }
}
