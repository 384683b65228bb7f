/**
 * The reading half of a wire connection, the one parser of its answers: it owns the read buffer, the phase of
 * the exchange, the body's framing and when the idle timer (`idle-timer.ts`) runs. The connection
 * (`connection.ts`) owns the socket's life and the request, and hears from here when a head came, when an answer
 * is whole, and when reading failed.
 *
 * The buffer is this object's alone. Every read of the socket lands in it (`nextBuffer`), except while an answer
 * read whole waits for its taker: those reads land in `SPARE`. A head is gathered at its start; a body's bytes
 * are handed to the body as views of it, valid until `push` returns, or, on a plain socket, kept as views while
 * the socket is paused for them (`WireBody.holdingViews`), and then the buffer is not read into again until the
 * body says it took them (`resume`, `drained`).
 *
 * The idle timer (`--timeout`) runs exactly while an answer is awaited from the server: in `head`, and in `body`
 * while reading goes on. A body paused, because its taker has not started or is behind (a slow part file),
 * stops it, and so does an answer read whole. A timer that fires is a stall only when no byte came in the turn of
 * the event loop after it: a loop held up elsewhere (a slow disk's writes) may have left bytes waiting in the
 * kernel that the server sent in time.
 */
import type { Socket } from 'node:net';
import { FAULTS } from '../../core/dispatch-faults.js';
import { ChunkedDecoder } from './chunked.js';
import { headEnd, MAX_HEAD_BYTES, parseHead, type ResponseHead, WireError } from './head.js';
import { IdleTimer } from './idle-timer.js';
import type { WireAnswer } from './types.js';
import { type BodySource, WireBody } from './wire-body.js';

/** What one read of the socket may take at most (and what a connection holds in memory for reading). */
const READ_BUFFER_BYTES = 1024 * 1024;
/**
 * Where a connection reads while nothing of its own may be overwritten (an answer whole but not yet taken) or
 * after it closed: bytes that land here are copied out or refused within the callback that reads them, so every
 * connection shares it.
 */
const SPARE = Buffer.allocUnsafeSlow(64 * 1024);

/** What the reader tells its connection. */
export interface ReaderHost {
  /** The answer's head came: the exchange resolves with it (its body follows); `keepAliveMs`: the server's hint. */
  answered(answer: WireAnswer, keepAliveMs: number | undefined): void;
  /** The answer was read whole: an abort no longer touches it. */
  whole(): void;
  /** The answer is done with: the connection serves again (`reusable`) or closes. */
  finished(reusable: boolean): void;
  /** Reading failed (bad framing, a stall, a body given up): the connection closes with `error`. */
  failed(error: unknown): void;
}

/**
 * `head`: gathering a head; `body`: a body arriving; `draining`: the answer is whole and some of it still waits in
 * the buffer for the body's taker; `idle`: between exchanges; `closed`: for good.
 */
type Phase = 'idle' | 'head' | 'body' | 'draining' | 'closed';

/** The reader of a connection's answers (see the file's comment). */
export class AnswerReader implements BodySource {
  readonly #host: ReaderHost;
  readonly #timeoutMs: number;
  #socket: Socket | undefined;
  readonly #buffer: Buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  /** Bytes of a response head gathered at the start of the buffer. */
  #fill = 0;
  #phase: Phase = 'idle';
  #method = 'GET';
  /** Whether the request's body (if any) was sent whole: an answer before that leaves the stream out of step. */
  #sent = true;
  #framing: ResponseHead['framing'] = { kind: 'length', length: 0 };
  /** Bytes of a body of known length still to come. */
  #left = 0;
  #chunked: ChunkedDecoder | undefined;
  #reusable = true;
  #body: WireBody | undefined;
  /** Whether reading stopped for the body's taker, until `resume`. */
  #paused = false;
  /** Whether the body's taker took every chunk of the current read (set by `#onChunk`). */
  #flowing = true;
  /** Whether the current read is in the reader's own buffer (for `#onChunk`). */
  #ownRead = true;
  /** Whether any byte of the current (or last) answer came. */
  #answered = false;
  /** Reads so far, to tell a stall from a loop held up elsewhere. */
  #reads = 0;
  readonly #idle: IdleTimer;
  readonly lendsWhilePaused: boolean;
  /** The socket's `onread` option: every read lands where `nextBuffer` says. */
  readonly onread = {
    buffer: () => this.#nextBuffer(),
    callback: (nread: number, landed: Buffer) => this.#onRead(nread, landed),
  };
  readonly #onChunk = (data: Buffer) => {
    this.#flowing = (this.#body as WireBody).push(data, this.#ownRead) && this.#flowing;
  };

  constructor(host: ReaderHost, timeoutMs: number, lendsWhilePaused: boolean) {
    this.#host = host;
    this.#timeoutMs = timeoutMs;
    this.#idle = new IdleTimer(timeoutMs, () => this.#onTimeout());
    this.lendsWhilePaused = lendsWhilePaused;
  }

  /** The socket read (made with `onread`), once it exists. */
  attach(socket: Socket): void {
    this.#socket = socket;
  }

  /** Whether the reader is between exchanges. */
  get idle(): boolean {
    return this.#phase === 'idle';
  }

  /** Whether any byte of the current (or the last) answer came: a request is sent again only when none did. */
  get answered(): boolean {
    return this.#answered;
  }

  /** Where the exchange is, as a failure names it. */
  get waitingFor(): 'head' | 'body' | undefined {
    return this.#phase === 'head' || this.#phase === 'body' ? this.#phase : undefined;
  }

  /** A request went out: its answer's head is awaited (`sent`: no body of its own is still to be sent). */
  begin(method: string, sent: boolean): void {
    this.#phase = 'head';
    this.#method = method;
    this.#sent = sent;
    this.#fill = 0;
    this.#reusable = true;
    this.#answered = false;
    this.#readOn();
    this.#idle.set(true);
  }

  /** The request's body was sent whole. */
  sentWhole(): void {
    this.#sent = true;
  }

  /** From the body: its taker takes bytes again. */
  resume(): void {
    if (!this.#paused || this.#phase === 'closed') return;
    this.#readOn();
    if (this.#phase === 'body') this.#idle.set(true);
  }

  /** From the body: what waited in the buffer was taken; an answer read whole is done with. */
  drained(): void {
    if (this.#phase === 'draining') this.#settle();
  }

  /** From the body: whoever held it gave up on the rest. */
  abandon(): void {
    if (this.#phase === 'body') this.#host.failed(new WireError('the body was abandoned', FAULTS.abandoned));
    else this.drained();
  }

  /** Bytes of the request went out (an upload's): like a read, they restart the idle timer. */
  wrote(): void {
    this.#idle.touch();
  }

  /** The idle timer ran out: a stall if nothing comes in the next turn of the loop either. */
  #onTimeout(): void {
    const phase = this.#phase;
    if (phase !== 'head' && (phase !== 'body' || this.#paused)) return;
    const reads = this.#reads;
    setImmediate(() => {
      if (this.#reads !== reads || this.#phase !== phase || this.#paused) return;
      this.#host.failed(
        phase === 'head'
          ? new WireError(`no answer within ${this.#timeoutMs} ms`, FAULTS.answerTimeout)
          : new WireError(`no data for ${this.#timeoutMs} ms`, FAULTS.bodyTimeout),
      );
    });
  }

  /** The server ended the stream: true when that ended a body framed by the close (the answer is whole). */
  onEnd(): boolean {
    if (this.#phase !== 'body' || this.#framing.kind !== 'close') return false;
    this.#reusable = false;
    this.#finishBody();
    return true;
  }

  /** The connection closed: an answer read whole stays whole; a body in progress ends with `error`. */
  close(error: unknown): void {
    const whole = this.#phase === 'draining';
    this.#phase = 'closed';
    const body = this.#body;
    this.#body = undefined;
    this.#idle.close();
    body?.end(whole ? undefined : error);
  }

  /**
   * The memory of the next read (asked after each read): the rest of the buffer while a head is gathered, the
   * whole buffer while a body arrives or between exchanges (the next answer's first read, most often its head and
   * body together, lands where it is read from), and the spare buffer otherwise, so that an answer whose bytes
   * wait in the buffer for their taker is never overwritten.
   */
  #nextBuffer(): Buffer {
    const phase = this.#phase;
    if (phase === 'head') return this.#fill > 0 ? this.#buffer.subarray(this.#fill) : this.#buffer;
    return phase === 'body' || phase === 'idle' ? this.#buffer : SPARE;
  }

  /** One read of `nread` bytes into `landed` (what `#nextBuffer` gave). Returns false to pause the socket. */
  #onRead(nread: number, landed: Buffer): boolean {
    this.#reads += 1;
    this.#idle.touch();
    try {
      const own = landed.buffer === this.#buffer.buffer;
      if (this.#phase === 'head') {
        // The first read of an answer may land in the spare buffer (asked for between exchanges).
        if (!own) landed.copy(this.#buffer, this.#fill, 0, nread);
        return this.#keepReading(this.#onHeadBytes(nread));
      }
      if (this.#phase === 'body') return this.#keepReading(this.#onBodyBytes(landed.subarray(0, nread), own));
      // Bytes nobody asked for (between exchanges): the stream is out of step; it serves no more.
      if (this.#phase !== 'closed') {
        this.#host.failed(new WireError('the server sent bytes between answers', FAULTS.closed));
      }
    } catch (error) {
      this.#host.failed(error);
    }
    return true;
  }

  /**
   * Whether the socket reads on: paused only while a body's taker is not taking (a connection back in its pool
   * keeps reading, to hear the server close it); a paused body's idle timer stops.
   */
  #keepReading(flowing: boolean): boolean {
    if (flowing || this.#phase !== 'body') return true;
    this.#paused = true;
    this.#idle.set(false);
    return false;
  }

  #onHeadBytes(nread: number): boolean {
    this.#answered = true;
    let searchFrom = this.#fill;
    this.#fill += nread;
    for (;;) {
      const end = headEnd(this.#buffer, this.#fill, searchFrom);
      if (end === -1 || end > MAX_HEAD_BYTES) {
        if (this.#fill >= MAX_HEAD_BYTES) {
          throw new WireError(
            `the answer's head is larger than ${MAX_HEAD_BYTES / 1024} KiB`,
            FAULTS.headTooLarge,
          );
        }
        return true;
      }
      const head = parseHead(this.#buffer.toString('latin1', 0, end - 4), this.#method);
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
    this.#framing = head.framing;
    this.#left = head.framing.kind === 'length' ? head.framing.length : 0;
    this.#chunked = head.framing.kind === 'chunked' ? new ChunkedDecoder() : undefined;
    this.#reusable = head.keepAlive && head.framing.kind !== 'close' && this.#sent;
    const body = new WireBody(this, () => (this.#framing.kind === 'length' ? this.#left : undefined));
    this.#body = body;
    this.#phase = 'body';
    const rest = this.#buffer.subarray(end, this.#fill);
    this.#fill = 0;
    this.#host.answered({ statusCode: head.statusCode, headers: head.headers, body }, head.keepAliveMs);
    if (this.#framing.kind === 'length' && this.#left === 0) {
      if (rest.length > 0) this.#reusable = false;
      this.#finishBody();
      return true;
    }
    return rest.length === 0 ? false : this.#onBodyBytes(rest, true);
  }

  /** Bytes of the body; `own`: they are in the reader's buffer (and may be left there for their taker). */
  #onBodyBytes(chunk: Buffer, own: boolean): boolean {
    const body = this.#body as WireBody;
    let flowing = true;
    if (this.#framing.kind === 'length') {
      const take = Math.min(chunk.length, this.#left);
      this.#left -= take;
      if (take < chunk.length) this.#reusable = false;
      if (take > 0) flowing = body.push(take === chunk.length ? chunk : chunk.subarray(0, take), own);
      if (this.#left === 0 && this.#phase === 'body') this.#finishBody();
    } else if (this.#chunked) {
      const decoder = this.#chunked;
      this.#flowing = true;
      this.#ownRead = own;
      const used = decoder.feed(chunk, this.#onChunk);
      flowing = this.#flowing;
      if (used < chunk.length) this.#reusable = false;
      if (decoder.done && this.#phase === 'body') this.#finishBody();
    } else {
      flowing = body.push(chunk, own);
    }
    return flowing;
  }

  /**
   * The answer is whole: the connection serves again, or closes; first, when bytes of it still wait in the
   * buffer for the body's taker, it waits for them to be taken (`drained`).
   */
  #finishBody(): void {
    this.#idle.set(false);
    this.#host.whole();
    if (this.#body?.holdingViews) {
      this.#phase = 'draining';
      return;
    }
    this.#settle();
  }

  #settle(): void {
    const body = this.#body;
    this.#body = undefined;
    if (this.#reusable) {
      this.#phase = 'idle';
      // Reading on between exchanges, to hear the server close the connection.
      this.#readOn();
    } else {
      this.#phase = 'closed';
    }
    this.#host.finished(this.#reusable);
    body?.end();
  }

  /** Reading goes on (after a pause for the body's taker). */
  #readOn(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#socket?.resume();
  }
}
