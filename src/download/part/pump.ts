/**
 * Copying an answer's body into a part file: chunks taken as they arrive and written in batches at their
 * offsets, with what the checksum and the progress need on the way.
 */
import { listenForAbort } from '../../core/abort-hub.js';
import { abortedError } from '../../core/batch.js';
import type { ChecksumFeed } from '../../core/checksums/checksum.js';
import { FAULTS, faultWords } from '../../core/dispatch-faults.js';
import { NetworkError, ProtocolError } from '../../core/errors.js';
import { errorCode } from '../../core/failure-policy.js';
import { type AnswerBody, discardBody } from '../../http/body.js';
import type { PartFile } from './part-file.js';

/** A chunk at least this large is written as it is; smaller ones (TLS hands over 16 KiB) are gathered. */
const DIRECT_WRITE_BYTES = 256 * 1024;
/** Where the small chunks of one body are gathered for one write: taken from a pool, given back at its end. */
const STAGING_BYTES = 1024 * 1024;
const stagingPool: Buffer[] = [];
/** Buffers kept in the pool at most (as many as bodies are received at once, usually). */
const STAGING_POOL_MAX = 64;

/** A buffer of 1 MiB to gather a body's small chunks in, from the pool; given back with `giveStaging`. */
export function takeStaging(): Buffer {
  return stagingPool.pop() ?? Buffer.allocUnsafeSlow(STAGING_BYTES);
}

/** A staging buffer back to the pool, once what it gathered is written. */
export function giveStaging(buffer: Buffer): void {
  if (stagingPool.length < STAGING_POOL_MAX) stagingPool.push(buffer);
}

/**
 * A write that held the thread this long (a slow data root: NFS, a USB disk) puts the part file behind: see
 * `BodyPump.onData`. A write of 1 MiB to a normal disk's page cache takes well under a millisecond.
 */
const SLOW_WRITE_MS = 10;

/** Progress is reported at most once per this many bytes received. */
const PROGRESS_STEP_BYTES = 64 * 1024;

/**
 * The error of a body that ended before its last byte (`outcome` from `pump`): a stall (`--timeout` without a
 * byte) or a dropped connection, worth another attempt from the bytes on disk.
 */
export function bodyEndedEarly(shown: string, outcome: PumpOutcome, total: number | undefined): NetworkError {
  const got = `received ${outcome.position} of ${total ?? 'an unknown number of'} bytes`;
  const hint = 'Run the download again: it resumes where this one stopped.';
  const cause = outcome.error;
  if (errorCode(cause) === FAULTS.bodyTimeout) {
    return new NetworkError(`GET ${shown}: the object store's answer stalled; ${got}.`, {
      code: 'E_TIMEOUT',
      cause,
      peer: 'object store',
      hint,
    });
  }
  // In the words of the shared vocabulary when the fault is one of it: the same whichever client met it.
  const words = faultWords(errorCode(cause)) ?? (cause instanceof Error ? cause.message : undefined);
  const why = words ? ` (${words})` : '';
  return new NetworkError(`GET ${shown}: the connection ended early; ${got}${why}.`, {
    code: 'E_INCOMPLETE',
    cause,
    peer: 'object store',
    hint,
  });
}

/** The error of a body that went on past the length its answer announced. */
export function longerThanAnnounced(total: number): ProtocolError {
  return new ProtocolError(`The server sent more than the announced ${total} bytes.`);
}

/** How far a body got. */
export interface PumpOutcome {
  /** Bytes of the object on disk after this body. */
  position: number;
  /** Why the body ended early, when it did. */
  error?: unknown;
}

/** What `pump` copies where, and whom it tells. */
export interface PumpJob {
  body: AnswerBody;
  part: PartFile;
  /** Byte of the object the body's first byte is written at. */
  from: number;
  /** The object's size, when known: a body that runs past it is refused. */
  total?: number | undefined;
  /** Fed every byte, in order; told what is on disk after each write, when it asks (a `PartChecksum`). */
  checksum?: (ChecksumFeed & { flushed?(position: number): void }) | undefined;
  signal?: AbortSignal | undefined;
  /** Bytes of the object received up to this position (at most every 64 KiB, and at the end). */
  report: (position: number) => void;
  /** Bytes up to this position are on disk (after every write): the part's record may say so. */
  written?: ((position: number) => void) | undefined;
  /** Where the body is to stop (exclusive); see `extend`. */
  limit?: number | undefined;
  /** At `limit`: a further limit to carry on to, or undefined to stop there. */
  extend?: ((position: number) => number | undefined) | undefined;
}

/**
 * Copies a body to the part file from `from`. A body's chunks are lent (valid only during the call that hands
 * them over: the wire client's are views of its read buffer): each large chunk is written as it comes (one system
 * call per read of the socket: a plain socket reads up to 1 MiB at once), and the small ones (a TLS record is
 * 16 KiB, undici's chunks 64 KiB) are copied into a staging buffer written once it holds ~1 MiB. Errors of the body are returned (the caller may resume); errors writing the file and bodies longer than
 * announced are thrown. At `limit` the bytes so far are written and `extend` may give a further limit to carry on
 * to (the body goes on into the next part, no new request); without one the body is dropped there. Always
 * settles: a body already ended or destroyed (by an abort that came before this call) ends it at once, as does a
 * signal already aborted.
 *
 * Backpressure: the body's socket is paused while the part file is behind. Writes stay synchronous (on a normal
 * disk that costs the least CPU; handing them to threads cost more on 2 cores), so the file is behind only
 * after a write that held the thread (`SLOW_WRITE_MS`): the body then waits until the event loop has turned once
 * (its socket paused, its idle timer stopped). One body never holds the loop for more than one slow write in a
 * row, and the other connections are read, and their timers heard, in between: a slow disk slows the transfers,
 * it does not make them look stalled.
 */
export function pump(job: PumpJob): Promise<PumpOutcome> {
  return new BodyPump(job).run();
}

/** One body on its way into a part file: what is written, what waits to be, and how far it got. */
class BodyPump {
  private readonly job: PumpJob;
  private readonly part: PartFile;
  private readonly checksum: PumpJob['checksum'];
  /** Bytes of the object on disk. */
  private position: number;
  /** Where the body is to stop (exclusive), when it is to. */
  private end: number | undefined;
  /** A large chunk on its way to the file (written before its callback returns). */
  private pending: Buffer[] = [];
  /** Bytes taken and not yet written (pending or staged). */
  private pendingBytes = 0;
  private staging: Buffer | undefined;
  private staged = 0;
  private reported: number;
  private settled = false;
  private resolve!: (outcome: PumpOutcome) => void;
  private reject!: (error: Error) => void;
  /** Stops listening for the signal's abort (which destroys the body). */
  private unlisten: (() => void) | undefined;
  /** Whether the last write was slow (see `pump`): the body is to wait a turn of the event loop. */
  private behind = false;
  /** Takes a chunk; returns a promise (the body pauses until it settles) when the part file is behind. */
  private readonly onData = (data: Buffer): Promise<void> | undefined => {
    this.take(data);
    if (!this.behind) return undefined;
    this.behind = false;
    return new Promise((resolve) => setImmediate(resolve));
  };

  constructor(job: PumpJob) {
    this.job = job;
    this.part = job.part;
    this.checksum = job.checksum;
    this.position = job.from;
    this.end = job.limit;
    this.reported = job.from;
  }

  /** Consumes the body; settles once it ended, was cut at its limit, or failed. */
  run(): Promise<PumpOutcome> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      const { body, signal } = this.job;
      if (signal?.aborted) {
        // The abort came before this body was handed over: its listener would never hear it.
        discardBody(body);
        this.finish(abortedError(signal));
        return;
      }
      if (signal) this.unlisten = listenForAbort(signal, () => body.destroy(abortedError(signal)));
      body.consume(this.onData).then(
        (error) => this.finish(error ?? undefined),
        (error) => this.finish(error),
      );
    });
  }

  /** One chunk of the body: up to the limit (carried on past it when `extend` says so), checked and taken. */
  private take(data: Buffer): void {
    if (this.settled) return;
    let chunk = data;
    while (this.end !== undefined && chunk.length >= this.end - (this.position + this.pendingBytes)) {
      const room = this.end - (this.position + this.pendingBytes);
      if (!this.takeToLimit(chunk.subarray(0, room))) return;
      chunk = chunk.subarray(room);
      if (chunk.length === 0) return;
    }
    this.checksum?.update(chunk);
    this.add(chunk);
    if (this.job.total !== undefined && this.position + this.pendingBytes > this.job.total) {
      this.fail(longerThanAnnounced(this.job.total));
      return;
    }
    const received = this.position + this.pendingBytes;
    if (received - this.reported >= PROGRESS_STEP_BYTES) {
      this.reported = received;
      this.job.report(received);
    }
  }

  /** The last bytes before the limit, written; true when `extend` gives a further limit to carry on to. */
  private takeToLimit(head: Buffer): boolean {
    this.checksum?.update(head);
    this.add(head);
    let further: number | undefined;
    try {
      // The bytes up to the limit are on disk before anyone is told they are.
      this.flush();
      further = this.job.extend?.(this.position);
    } catch (error) {
      this.fail(error as Error);
      return false;
    }
    if (further === undefined || further <= this.position) {
      // Enough of this body: the rest comes by other requests.
      this.finish();
      discardBody(this.job.body);
      return false;
    }
    this.end = further;
    return true;
  }

  /** Takes a chunk to write, before its callback returns: written at once (large), or staged (small). */
  private add(chunk: Buffer): void {
    if (chunk.length >= DIRECT_WRITE_BYTES) {
      this.flush();
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      this.flush();
      return;
    }
    this.staging ??= takeStaging();
    if (this.staged + chunk.length > this.staging.length) this.flush();
    chunk.copy(this.staging, this.staged);
    this.staged += chunk.length;
    this.pendingBytes += chunk.length;
  }

  /** Writes what was taken at its offset, and tells the checksum and the record. */
  private flush(): void {
    if (this.pendingBytes === 0) return;
    const chunks = this.staged > 0 ? [(this.staging as Buffer).subarray(0, this.staged)] : this.pending;
    const started = performance.now();
    this.part.write(chunks, this.pendingBytes, this.position);
    if (performance.now() - started >= SLOW_WRITE_MS) this.behind = true;
    this.position += this.pendingBytes;
    this.checksum?.flushed?.(this.position);
    this.pending = [];
    this.pendingBytes = 0;
    this.staged = 0;
    this.job.written?.(this.position);
  }

  private cleanUp(): void {
    this.settled = true;
    this.unlisten?.();
    if (this.staging) giveStaging(this.staging);
    this.staging = undefined;
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.cleanUp();
    discardBody(this.job.body);
    this.reject(error);
  }

  /** Bytes that arrived before a drop are good: they are written so the resume starts after them. */
  private finish(readError?: unknown): void {
    if (this.settled) return;
    try {
      this.flush();
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    this.cleanUp();
    if (this.position !== this.reported) this.job.report(this.position);
    this.resolve(
      readError === undefined ? { position: this.position } : { position: this.position, error: readError },
    );
  }
}
