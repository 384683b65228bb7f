/**
 * Copying an answer's body into a part file: chunks taken as they arrive and written in batches at their
 * offsets, with what the checksum and the progress need on the way.
 */
import { abortedError } from '../core/batch.js';
import type { ChecksumFeed } from '../core/checksums/checksum.js';
import { NetworkError, ProtocolError } from '../core/errors.js';
import { errorCode } from '../core/failure-policy.js';
import { type AnswerBody, discardBody } from '../http/body.js';
import type { PartFile } from './part-file.js';

/** Received chunks are written in batches of this size (see `pump`). */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Keeps a batch of tiny chunks below the platform's iovec limit. */
const WRITE_BATCH_CHUNKS = 512;
/** A lent chunk at least this large is written as it is; smaller ones (TLS hands over 16 KiB) are gathered. */
const DIRECT_WRITE_BYTES = 256 * 1024;
/** Where the small lent chunks of one body are gathered for one write: taken from a pool, given back at its end. */
const STAGING_BYTES = 1024 * 1024;
const stagingPool: Buffer[] = [];
/** Buffers kept in the pool at most (as many as bodies are received at once, usually). */
const STAGING_POOL_MAX = 64;

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
  if (errorCode(cause) === 'UND_ERR_BODY_TIMEOUT') {
    return new NetworkError(`GET ${shown}: the object store's answer stalled; ${got}.`, {
      code: 'E_TIMEOUT',
      cause,
      peer: 'object store',
      hint,
    });
  }
  const why = cause instanceof Error ? ` (${cause.message})` : '';
  return new NetworkError(`GET ${shown}: the connection ended early; ${got}${why}.`, {
    code: 'E_INCOMPLETE',
    cause,
    peer: 'object store',
    hint,
  });
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
 * Copies a body to the part file from `from`. A body whose chunks are lent (the wire client's: views of its read
 * buffer) has each large chunk written as it comes (one system call per read of the socket: a plain socket reads
 * up to 1 MiB at once), and its small ones (a TLS record is 16 KiB) copied into a staging buffer written once it
 * holds ~1 MiB; one whose chunks are its own (undici's) is written in batches of ~1 MiB, one `writev` each
 * instead of a system call per 64 KiB network chunk. Errors of the body are returned (the caller may resume); errors writing the file and bodies longer than
 * announced are thrown. At `limit` the bytes so far are written and `extend` may give a further limit to carry on
 * to (the body goes on into the next part, no new request); without one the body is dropped there. Always
 * settles: a body already ended or destroyed (by an abort that came before this call) ends it at once, as does a
 * signal already aborted.
 */
export function pump(job: PumpJob): Promise<PumpOutcome> {
  const { body, part, checksum, signal, report } = job;
  // Lent chunks are gone once their callback returns: written, or copied into the staging buffer, before then.
  const lent = body.transient;
  return new Promise((resolve, reject) => {
    let position = job.from;
    let end = job.limit;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let staging: Buffer | undefined;
    let staged = 0;
    let reported = job.from;
    let settled = false;

    const flush = () => {
      if (pendingBytes === 0) return;
      part.write(staged > 0 ? [(staging as Buffer).subarray(0, staged)] : pending, pendingBytes, position);
      position += pendingBytes;
      checksum?.flushed?.(position);
      pending = [];
      pendingBytes = 0;
      staged = 0;
      job.written?.(position);
    };
    /** Takes a chunk to write: kept as it is (its own), written at once (lent and large), or staged (lent, small). */
    const add = (chunk: Buffer) => {
      if (!lent) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        return;
      }
      if (chunk.length >= DIRECT_WRITE_BYTES) {
        flush();
        pending.push(chunk);
        pendingBytes += chunk.length;
        flush();
        return;
      }
      staging ??= stagingPool.pop() ?? Buffer.allocUnsafeSlow(STAGING_BYTES);
      if (staged + chunk.length > staging.length) flush();
      chunk.copy(staging, staged);
      staged += chunk.length;
      pendingBytes += chunk.length;
    };
    const onAbort = () => body.destroy(abortedError(signal as AbortSignal));
    const cleanUp = () => {
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (staging && stagingPool.length < STAGING_POOL_MAX) stagingPool.push(staging);
      staging = undefined;
    };
    const fail = (error: Error) => {
      if (settled) return;
      cleanUp();
      discardBody(body);
      reject(error);
    };
    // Bytes that arrived before a drop are good: they are written so the resume starts after them.
    const finish = (readError?: unknown) => {
      if (settled) return;
      try {
        flush();
      } catch (error) {
        fail(error as Error);
        return;
      }
      cleanUp();
      if (position !== reported) report(position);
      resolve(readError === undefined ? { position } : { position, error: readError });
    };
    function onData(data: Buffer) {
      if (settled) return;
      let chunk = data;
      while (end !== undefined && chunk.length >= end - (position + pendingBytes)) {
        const room = end - (position + pendingBytes);
        checksum?.update(chunk.subarray(0, room));
        add(chunk.subarray(0, room));
        let further: number | undefined;
        try {
          // The bytes up to the limit are on disk before anyone is told they are.
          flush();
          further = job.extend?.(position);
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (further === undefined || further <= position) {
          // Enough of this body: the rest comes by other requests.
          finish();
          discardBody(body);
          return;
        }
        end = further;
        chunk = chunk.subarray(room);
        if (chunk.length === 0) return;
      }
      checksum?.update(chunk);
      add(chunk);
      if (job.total !== undefined && position + pendingBytes > job.total) {
        fail(new ProtocolError(`The server sent more than the announced ${job.total} bytes.`));
        return;
      }
      const received = position + pendingBytes;
      if (received - reported >= PROGRESS_STEP_BYTES) {
        reported = received;
        report(received);
      }
      if (!lent && (pendingBytes >= WRITE_BATCH_BYTES || pending.length >= WRITE_BATCH_CHUNKS)) {
        try {
          flush();
        } catch (error) {
          fail(error as Error);
        }
      }
    }
    if (signal?.aborted) {
      // The abort came before this body was handed over: its listener would never hear it.
      discardBody(body);
      finish(abortedError(signal));
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    body.consume(onData).then(
      (error) => finish(error ?? undefined),
      (error) => finish(error),
    );
  });
}
