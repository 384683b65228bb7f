/**
 * One HTTP/1.1 connection of the wire client, plain or TLS. Every read of the socket lands in one buffer the
 * connection owns (`onread`): a response head is gathered at its start, and a body's bytes are handed on as views
 * of it, valid until the callback returns, so receiving a body allocates nothing per read. A body is sent from a
 * source read synchronously into two buffers that take turns. One exchange at a time; after a whole answer with
 * keep-alive, the connection goes back to its pool.
 */
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { AnswerBody } from '../body.js';
import {
  ChunkedDecoder,
  headEnd,
  MAX_HEAD_BYTES,
  parseHead,
  type ResponseHead,
  requestHead,
  WireError,
} from './head.js';

/** What one read of the socket may take at most (and what a connection holds in memory for reading). */
const READ_BUFFER_BYTES = 1024 * 1024;
/**
 * Where a connection reads while nothing of its own may be overwritten (an answer whole but not yet taken, or
 * between exchanges): bytes that land here are copied out or refused within the callback that reads them, so
 * every connection shares it.
 */
const SPARE = Buffer.allocUnsafeSlow(64 * 1024);
/** Bytes read from an upload's source per write. */
const SEND_BUFFER_BYTES = 1024 * 1024;
/** The rest of a body that `dump` reads to keep the connection; a longer rest closes it instead. */
const DUMP_LIMIT_BYTES = 256 * 1024;

/** The limits of a connection, in ms. */
export interface WireTimeouts {
  /** To connect (and finish the TLS handshake). */
  connectMs: number;
  /** Without a byte from the server while an answer is awaited or read. */
  idleMs: number;
}

/** The body of a PUT: a source read synchronously at any position (a retry reads it again from 0). */
export interface WireUpload {
  size: number;
  /** Fills `into` from byte `position` of the source; returns the bytes read (fewer only at its end). */
  read(into: Buffer, position: number): number;
  /** Called before the last bytes are sent: throws when the source is not as it was measured. */
  check?: (() => void) | undefined;
  /** Bytes handed to the network so far, in this attempt. */
  onBytes?: ((sent: number) => void) | undefined;
}

/** One request of the wire client. */
export interface WireRequest {
  method: 'GET' | 'PUT';
  url: URL;
  headers: Record<string, string>;
  upload?: WireUpload | undefined;
  signal?: AbortSignal | undefined;
}

/** An answer: its head, and its body to consume (or dump, or destroy). */
export interface WireAnswer {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: WireBody;
}

/** Error codes (the ones undici uses, so a failure reads alike whichever client sent the request). */
const CODES = {
  connectTimeout: 'UND_ERR_CONNECT_TIMEOUT',
  headersTimeout: 'UND_ERR_HEADERS_TIMEOUT',
  bodyTimeout: 'UND_ERR_BODY_TIMEOUT',
  closed: 'UND_ERR_SOCKET',
  headersOverflow: 'UND_ERR_HEADERS_OVERFLOW',
} as const;

/** What the pool does with a connection: takes it back when it may serve again, forgets it when it closed. */
export interface ConnectionOwner {
  release(connection: WireConnection): void;
  forget(connection: WireConnection): void;
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
    private readonly connection: WireConnection,
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
export class WireConnection {
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
        () => done(new WireError(`connect timeout (${timeouts.connectMs} ms)`, CODES.connectTimeout)),
        timeouts.connectMs,
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
      this.#socket.setTimeout(this.#timeouts.idleMs);
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

  /** Sends an upload's bytes after the head, two buffers taking turns; stops when an answer came first. */
  async #send(upload: WireUpload, exchange: Exchange): Promise<void> {
    this.#sendBuffers ??= [
      Buffer.allocUnsafeSlow(SEND_BUFFER_BYTES),
      Buffer.allocUnsafeSlow(SEND_BUFFER_BYTES),
    ];
    const buffers = this.#sendBuffers;
    const writing: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];
    let position = 0;
    let turn = 0;
    try {
      while (position < upload.size) {
        await writing[turn];
        // An answer came (the server refused early) or the exchange failed: nothing more to send.
        if (this.#exchange !== exchange || exchange.answered) return;
        const buffer = buffers[turn] as Buffer;
        const length = Math.min(buffer.length, upload.size - position);
        let read = 0;
        while (read < length) {
          const got = upload.read(buffer.subarray(read, length), position + read);
          if (got === 0) break;
          read += got;
        }
        if (read < length || position + length === upload.size) upload.check?.();
        if (read < length)
          throw new WireError('the source ended before its size', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH');
        writing[turn] = new Promise((resolve) =>
          this.#socket.write(buffer.subarray(0, length), () => resolve()),
        );
        position += length;
        upload.onBytes?.(position);
        turn = 1 - turn;
      }
      if (upload.size === 0) upload.check?.();
      await Promise.all(writing);
      if (this.#exchange === exchange) exchange.sent = true;
    } catch (error) {
      if (this.#exchange === exchange) this.#fail(error);
    }
  }

  #onTimeout(): void {
    if (this.#phase === 'head') {
      this.#fail(new WireError(`no answer within ${this.#timeouts.idleMs} ms`, CODES.headersTimeout));
    } else if (this.#phase === 'body') {
      this.#fail(new WireError(`no data for ${this.#timeouts.idleMs} ms`, CODES.bodyTimeout));
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

/** The error of a request its signal stopped. */
function abortError(signal: AbortSignal | undefined): Error {
  return Object.assign(new Error('This operation was aborted', { cause: signal?.reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}
