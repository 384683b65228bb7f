/**
 * One HTTP/1.1 connection of the wire client, plain or TLS. Every read of the socket lands in one buffer the
 * connection owns (`onread`): a response head is gathered at its start, and a body's bytes are handed on as views
 * of it, valid until the callback returns, so receiving a body allocates nothing per read. A body is sent from a
 * source read synchronously into two buffers that take turns. One exchange at a time; after a whole answer with
 * keep-alive, the connection goes back to its pool.
 */
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  ChunkedDecoder,
  headEnd,
  MAX_HEAD_BYTES,
  parseHead,
  type ResponseHead,
  requestHead,
  WireError,
} from './head.js';
import { sendBuffers, sendUpload } from './send-upload.js';
import {
  abortError,
  CODES,
  type WireAnswer,
  type WireRequest,
  type WireTimeouts,
  type WireUpload,
} from './types.js';
import { type BodySource, WireBody } from './wire-body.js';

/** What one read of the socket may take at most (and what a connection holds in memory for reading). */
const READ_BUFFER_BYTES = 1024 * 1024;
/**
 * Where a connection reads while nothing of its own may be overwritten (an answer whole but not yet taken, or
 * between exchanges): bytes that land here are copied out or refused within the callback that reads them, so
 * every connection shares it.
 */
const SPARE = Buffer.allocUnsafeSlow(64 * 1024);

/** What the pool does with a connection: takes it back when it may serve again, forgets it when it closed. */
export interface ConnectionOwner {
  release(connection: WireConnection): void;
  forget(connection: WireConnection): void;
}

interface Exchange {
  method: string;
  head: { resolve: (answer: WireAnswer) => void; reject: (error: unknown) => void } | undefined;
  body: WireBody | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  /** Whether any byte of the answer came. */
  answered: boolean;
  /** Whether the request's body was sent whole. */
  sent: boolean;
}

/** A connection of the wire client (see the file's comment). */
export class WireConnection implements BodySource {
  readonly #socket: Socket;
  readonly #timeouts: WireTimeouts;
  readonly #owner: ConnectionOwner;
  #buffer: Buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  #sendBuffers: [Buffer, Buffer] | undefined;
  /** Bytes of a response head gathered at the start of the buffer. */
  #fill = 0;
  /** `draining`: the answer is whole, and some of it still waits in the buffer for the body's reader. */
  #phase: 'connecting' | 'idle' | 'head' | 'body' | 'draining' | 'closed' = 'connecting';
  #exchange: Exchange | undefined;
  #framing: ResponseHead['framing'] = { kind: 'length', length: 0 };
  #left = 0;
  #chunked: ChunkedDecoder | undefined;
  #reusable = true;
  /** Whether reading stopped (a read callback said so) until `resume`. */
  #paused = false;
  /** Requests this connection carried. */
  requests = 0;
  /** When it went back to the pool, and how long the server keeps it (ms). */
  idleSince = 0;
  keepAliveMs: number | undefined;
  readonly origin: string;
  /** Whether bytes read stay in the buffer while the socket is paused (plain TCP; not TLS). */
  readonly lendsWhilePaused: boolean;

  private constructor(url: URL, timeouts: WireTimeouts, owner: ConnectionOwner) {
    this.origin = url.origin;
    this.#timeouts = timeouts;
    this.#owner = owner;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const tls = url.protocol === 'https:';
    this.lendsWhilePaused = !tls;
    const port = Number(url.port) || (tls ? 443 : 80);
    const onread = {
      buffer: () => this.#nextBuffer(),
      callback: (n: number, buffer: Buffer) => this.#onRead(n, buffer),
    };
    this.#socket = tls
      ? tlsConnect({
          host,
          port,
          ...(isIP(host) ? {} : { servername: host }),
          ALPNProtocols: ['http/1.1'],
          // Node's TLS sockets take `onread` as its TCP sockets do; its types leave it out.
          ...({ onread, noDelay: true } as Record<string, unknown>),
        })
      : tcpConnect({ host, port, onread, noDelay: true });
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('end', () => this.#onEnd());
    this.#socket.on('close', () => this.#onEnd());
    this.#socket.on('timeout', () => this.#onTimeout());
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
      const done = (error?: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', done);
        socket.off(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
        if (error === undefined) {
          connection.#phase = 'idle';
          resolve(connection);
        } else {
          connection.#phase = 'closed';
          socket.destroy();
          reject(error);
        }
      };
      const connected = () => done();
      const onAbort = () => done(abortError(signal));
      const timer = setTimeout(
        () => done(new WireError(`connect timeout (${timeouts.timeoutMs} ms)`, CODES.connectTimeout)),
        timeouts.timeoutMs,
      );
      socket.once('error', done);
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Whether the connection is open and between exchanges. */
  get idle(): boolean {
    return this.#phase === 'idle';
  }

  /** Sends a request; resolves once the answer's head is read (its body then follows on `body`). */
  exchange(request: WireRequest): Promise<WireAnswer> {
    if (this.#phase !== 'idle') return Promise.reject(new Error('connection busy or closed'));
    const head = requestHead(request.method, request.url, request.headers);
    return new Promise((resolve, reject) => {
      const exchange: Exchange = {
        method: request.method,
        head: { resolve, reject },
        body: undefined,
        signal: request.signal,
        onAbort: () => this.#fail(abortError(request.signal)),
        answered: false,
        sent: request.upload === undefined,
      };
      if (request.signal?.aborted) {
        reject(abortError(request.signal));
        return;
      }
      this.requests += 1;
      this.#exchange = exchange;
      this.#phase = 'head';
      this.#fill = 0;
      this.#reusable = true;
      request.signal?.addEventListener('abort', exchange.onAbort, { once: true });
      this.#socket.ref();
      this.resume();
      this.#socket.setTimeout(this.#timeouts.timeoutMs);
      this.#socket.write(head, 'latin1');
      if (request.upload) void this.#send(request.upload, exchange);
    });
  }

  /** Whether an exchange in progress has received nothing yet (a kept-alive connection closed meanwhile). */
  unanswered(): boolean {
    return this.#exchange?.answered !== true;
  }

  /** Closes the connection (between exchanges, or giving up on one). */
  close(): void {
    this.#fail(new WireError('the connection was closed', CODES.closed));
  }

  /** From the body: whoever held it gave up on the rest. */
  abandon(): void {
    if (this.#phase === 'body') this.#fail(new WireError('the body was abandoned', 'UND_ERR_ABORTED'));
    else this.drained();
  }

  /** From the body: what waited in the buffer was taken (or given up); an answer read whole is done with. */
  drained(): void {
    if (this.#phase === 'draining') this.#settle(this.#exchange as Exchange);
  }

  /** From the body: someone consumes it now; reading goes on. */
  resume(): void {
    if (!this.#paused || this.#phase === 'closed') return;
    this.#paused = false;
    this.#socket.resume();
  }

  /**
   * The memory of the next read (asked after each read): the rest of the buffer while a head is gathered, the
   * whole buffer while a body arrives, and the spare buffer otherwise, so that an answer whose bytes wait in the
   * buffer for their reader is never overwritten, and the socket need not pause for it.
   */
  #nextBuffer(): Buffer {
    if (this.#phase === 'head') return this.#fill > 0 ? this.#buffer.subarray(this.#fill) : this.#buffer;
    return this.#phase === 'body' ? this.#buffer : SPARE;
  }

  /** One read of `nread` bytes into `landed` (what `#nextBuffer` gave). Returns false to pause the socket. */
  #onRead(nread: number, landed: Buffer): boolean {
    try {
      const own = landed.buffer === this.#buffer.buffer;
      if (this.#phase === 'head') {
        // The first read of an answer may land in the spare buffer (asked for between exchanges).
        if (!own) landed.copy(this.#buffer, this.#fill, 0, nread);
        return this.#keepReading(this.#onHeadBytes(nread));
      }
      if (this.#phase === 'body') return this.#keepReading(this.#onBodyBytes(landed.subarray(0, nread), own));
      // Bytes nobody asked for (between exchanges): the stream is out of step; it serves no more.
      this.#fail(new WireError('the server sent bytes between answers', CODES.closed));
    } catch (error) {
      this.#fail(error);
    }
    return true;
  }

  /**
   * Whether the socket reads on: paused only while a body waits for its reader (a connection back in its pool
   * keeps reading, to hear the server close it).
   */
  #keepReading(flowing: boolean): boolean {
    if (flowing || this.#phase !== 'body') return true;
    this.#paused = true;
    return false;
  }

  #onHeadBytes(nread: number): boolean {
    const exchange = this.#exchange as Exchange;
    exchange.answered = true;
    let searchFrom = this.#fill;
    this.#fill += nread;
    for (;;) {
      const end = headEnd(this.#buffer, this.#fill, searchFrom);
      if (end === -1 || end > MAX_HEAD_BYTES) {
        if (this.#fill >= MAX_HEAD_BYTES) {
          throw new WireError(
            `the answer's head is larger than ${MAX_HEAD_BYTES / 1024} KiB`,
            CODES.headersOverflow,
          );
        }
        return true;
      }
      const head = parseHead(this.#buffer.toString('latin1', 0, end - 4), exchange.method);
      if (head.statusCode >= 100 && head.statusCode < 200) {
        if (head.statusCode === 101) throw new WireError('the server switched protocols', 'HPE_UPGRADE');
        // An interim answer (100 Continue, 103 Early Hints): the final one follows.
        this.#buffer.copy(this.#buffer, 0, end, this.#fill);
        this.#fill -= end;
        searchFrom = 0;
        continue;
      }
      return this.#startBody(head, end);
    }
  }

  #startBody(head: ResponseHead, end: number): boolean {
    const exchange = this.#exchange as Exchange;
    this.#framing = head.framing;
    this.#left = head.framing.kind === 'length' ? head.framing.length : 0;
    this.#chunked = head.framing.kind === 'chunked' ? new ChunkedDecoder() : undefined;
    // An answer before the request's body was sent whole leaves the stream out of step.
    this.#reusable = head.keepAlive && head.framing.kind !== 'close' && exchange.sent;
    this.keepAliveMs = head.keepAliveMs;
    const body = new WireBody(this, () => (this.#framing.kind === 'length' ? this.#left : undefined));
    exchange.body = body;
    this.#phase = 'body';
    const rest = this.#buffer.subarray(end, this.#fill);
    this.#fill = 0;
    const { resolve } = exchange.head as NonNullable<Exchange['head']>;
    exchange.head = undefined;
    resolve({ statusCode: head.statusCode, headers: head.headers, body });
    if (this.#framing.kind === 'length' && this.#left === 0) {
      if (rest.length > 0) this.#reusable = false;
      this.#finishBody();
      return true;
    }
    return rest.length === 0 ? false : this.#onBodyBytes(rest, true);
  }

  /** Bytes of the body; `own`: they are in the connection's buffer (and may be left there for their reader). */
  #onBodyBytes(chunk: Buffer, own: boolean): boolean {
    const body = (this.#exchange as Exchange).body as WireBody;
    let flowing = true;
    if (this.#framing.kind === 'length') {
      const take = Math.min(chunk.length, this.#left);
      this.#left -= take;
      if (take < chunk.length) this.#reusable = false;
      if (take > 0) flowing = body.push(take === chunk.length ? chunk : chunk.subarray(0, take), own);
      if (this.#left === 0 && this.#phase === 'body') this.#finishBody();
    } else if (this.#chunked) {
      const decoder = this.#chunked;
      const used = decoder.feed(chunk, (data) => {
        flowing = body.push(data, own) && flowing;
      });
      if (used < chunk.length) this.#reusable = false;
      if (decoder.done && this.#phase === 'body') this.#finishBody();
    } else {
      flowing = body.push(chunk, own);
    }
    return flowing;
  }

  /**
   * The answer is whole: the connection serves again, or closes; first, when bytes of it still wait in the
   * buffer for the body's reader, it waits for them to be taken (`drained`).
   */
  #finishBody(): void {
    const exchange = this.#exchange as Exchange;
    exchange.signal?.removeEventListener('abort', exchange.onAbort);
    this.#socket.setTimeout(0);
    if (exchange.body?.holdingViews) {
      this.#phase = 'draining';
      return;
    }
    this.#settle(exchange);
  }

  #settle(exchange: Exchange): void {
    this.#exchange = undefined;
    if (this.#reusable) {
      this.#phase = 'idle';
      this.#socket.setTimeout(0);
      this.#socket.unref();
      // Reading on between exchanges, to hear the server close the connection.
      this.resume();
      this.idleSince = Date.now();
      this.#owner.release(this);
    } else {
      this.#phase = 'closed';
      this.#socket.destroy();
      this.#owner.forget(this);
    }
    exchange.body?.end();
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
        () => !current() || exchange.answered,
      );
      if (whole && current()) exchange.sent = true;
    } catch (error) {
      if (current()) this.#fail(error);
    }
  }

  #onTimeout(): void {
    if (this.#phase === 'head') {
      this.#fail(new WireError(`no answer within ${this.#timeouts.timeoutMs} ms`, CODES.headersTimeout));
    } else if (this.#phase === 'body') {
      this.#fail(new WireError(`no data for ${this.#timeouts.timeoutMs} ms`, CODES.bodyTimeout));
    }
  }

  #onEnd(): void {
    if (this.#phase === 'body' && this.#framing.kind === 'close') {
      this.#reusable = false;
      this.#finishBody();
      return;
    }
    this.#fail(new WireError('other side closed', CODES.closed));
  }

  /** Ends the connection; an exchange in progress fails with `error` (its head's promise, or its body). */
  #fail(error: unknown): void {
    if (this.#phase === 'closed') return;
    // An answer read whole stays whole whatever happens to the connection after it.
    const whole = this.#phase === 'draining';
    this.#phase = 'closed';
    this.#socket.destroy();
    this.#owner.forget(this);
    const exchange = this.#exchange;
    this.#exchange = undefined;
    if (!exchange) return;
    exchange.signal?.removeEventListener('abort', exchange.onAbort);
    if (exchange.head) exchange.head.reject(error);
    else exchange.body?.end(whole ? undefined : error);
  }
}
