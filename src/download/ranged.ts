/**
 * Parallel ranged downloads: a large object is fetched as parts over several connections at once, each part
 * written at its offset in the part file, resumed on its own after a dropped connection, and hashed in order
 * as soon as the bytes before it are in, so the whole object is still checked against the store's checksum.
 * Object stores cap what one connection carries; every fast client of them (aws-cli, rclone, aria2) splits.
 */

import type { Readable } from 'node:stream';
import { abortedError } from '../core/batch.js';
import type { PartChecksum } from '../core/checksum.js';
import { NetworkError, ProtocolError } from '../core/errors.js';
import { discardBody, header } from '../http/objects.js';
import { isRetryable } from '../http/retry.js';
import type { ObjectSource, ObjectState } from './object-state.js';
import type { PartFile } from './part-file.js';
import { pump } from './pump.js';

/** How a large object is split. */
export interface RangedPlan {
  /** Bytes per part. */
  partSize: number;
  /** Parts fetched at once. */
  connections: number;
}

/** Default bytes per part: large enough that per-request costs vanish, small enough to spread over connections. */
export const DEFAULT_PART_SIZE = 16 * 1024 * 1024;
/** Default parts fetched at once per file: as many as aria2's -x 8, near aws-cli's 10 requests at once. */
export const DEFAULT_CONNECTIONS = 8;

/** A part request was answered with the whole object: the store does not honour ranges after all. */
export class RangesIgnored extends Error {}

interface RangedJob {
  http: ObjectSource;
  url: string;
  /** The URL as messages show it. */
  shown: string;
  part: PartFile;
  /** `written` is the contiguous prefix on disk (and hashed); `total` and `etag` are known. */
  state: ObjectState & { total: number; etag: string };
  checksum: PartChecksum;
  plan: RangedPlan;
  maxResumes: number;
  signal?: AbortSignal | undefined;
  report: (received: number) => void;
  /** The body of the first answer (the whole object, from `state.written`): it carries the first part. */
  firstBody?: Readable | undefined;
}

interface Span {
  start: number;
  /** Exclusive. */
  end: number;
  /** Bytes of this span on disk, from `start`. */
  done: number;
  finished: boolean;
}

/** The record of the part is rewritten each time this many more parts are finished. */
const RECORD_EVERY_PARTS = 4;

/** Fetches the rest of the object from `state.written` as parts; resolves to the bytes received over the network. */
export async function receiveRanges(job: RangedJob): Promise<number> {
  const { state, plan, checksum } = job;
  // The bytes not on disk, as parts; the parts an earlier run finished after the first missing byte (its
  // record says which) are not asked for again: they stand as finished spans, which the checksum reads back.
  const spans: Span[] = [];
  let at = state.written;
  const missing = (end: number) => {
    for (; at < end; at = Math.min(end, at + plan.partSize)) {
      spans.push({ start: at, end: Math.min(end, at + plan.partSize), done: 0, finished: false });
    }
  };
  for (const [from, to] of state.finished ?? []) {
    if (from <= at || to > state.total) continue;
    missing(from);
    spans.push({ start: from, end: to, done: to - from, finished: true });
    at = to;
  }
  missing(state.total);
  let next = 0;
  let transferred = 0;
  let firstFailure: unknown;
  const progress = () => {
    let onDisk = state.written;
    for (const span of spans) if (span.start >= state.written) onDisk += span.done;
    job.report(onDisk);
  };
  // Parts land out of order, so the part's length no longer says what it holds: its record names the bytes on
  // disk from the start and the parts finished after them, for a run that takes it over after this one was
  // killed. `state.finished` says the same to the caller, which records it when the transfer is interrupted.
  let finishedSinceRecord = 0;
  const noteFinished = () => {
    const ranges: Array<[number, number]> = [];
    for (const span of spans) {
      if (!span.finished || span.start < state.written) continue;
      const last = ranges.at(-1);
      if (last && last[1] === span.start) last[1] = span.end;
      else ranges.push([span.start, span.end]);
    }
    state.finished = ranges.length > 0 ? ranges : undefined;
  };
  const recordProgress = () => {
    finishedSinceRecord = 0;
    noteFinished();
    try {
      job.part.record({ etag: state.etag, size: state.total, written: state.written, parts: state.finished });
    } catch {
      // Without it a later run resumes from the part's length and the checksum finds any hole: slower, not wrong.
    }
  };
  recordProgress();
  // Hashes every finished span that follows the hashed prefix, reading it back from the page cache.
  const advance = () => {
    for (const span of spans) {
      if (span.start !== state.written || !span.finished) continue;
      checksum.catchUp(span.end);
      state.written = span.end;
    }
  };
  advance();
  const worker = async () => {
    for (;;) {
      while (next < spans.length && (spans[next] as Span).finished) next += 1;
      if (next >= spans.length || firstFailure !== undefined) return;
      const span = spans[next] as Span;
      const initial = span === spans[0] ? job.firstBody : undefined;
      next += 1;
      try {
        const received = await fetchSpan(job, span, progress, initial);
        transferred += received;
        span.finished = true;
        advance();
        finishedSinceRecord += 1;
        if (finishedSinceRecord >= RECORD_EVERY_PARTS) recordProgress();
      } catch (error) {
        firstFailure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.connections, spans.length) }, worker));
  if (firstFailure !== undefined) {
    // What lies on disk is kept for the next run: the finished parts (a part whose every byte was written
    // counts, even if the failure came before it was counted finished) and the part after the prefix, as far as
    // it got.
    for (const span of spans) if (span.done === span.end - span.start) span.finished = true;
    advance();
    const frontier = spans.find((span) => span.start === state.written);
    if (frontier) state.written += frontier.done;
    noteFinished();
    throw firstFailure;
  }
  advance();
  if (state.written !== state.total) {
    throw new ProtocolError(
      `GET ${job.shown}: the parts did not cover the object (${state.written} of ${state.total} bytes).`,
    );
  }
  return transferred;
}

/**
 * Fetches one span, resuming it after dropped connections; resolves to the bytes received. `initial` is an
 * answer already under way that starts at the span's first byte: the first part is read from the first answer
 * while the other parts are asked for.
 */
async function fetchSpan(
  job: RangedJob,
  span: Span,
  progress: () => void,
  initial?: Readable,
): Promise<number> {
  const { http, url, state, signal } = job;
  let resumes = 0;
  let received = 0;
  let body = initial;
  for (;;) {
    if (signal?.aborted) throw abortedError(signal);
    const from = span.start + span.done;
    if (body) {
      const first = body;
      body = undefined;
      const outcome = await pump(
        first,
        job.part,
        { written: from, total: state.total, etag: state.etag },
        undefined,
        signal,
        (position) => {
          span.done = position - span.start;
          progress();
        },
        span.end,
      );
      received += outcome.position - from;
      span.done = outcome.position - span.start;
      if (signal?.aborted) throw abortedError(signal);
      if (outcome.position === span.end) return received;
      continue;
    }
    let response: Awaited<ReturnType<ObjectSource['getObject']>>;
    try {
      response = await http.getObject(url, { start: from, end: span.end - 1, ifMatch: state.etag, signal });
    } catch (error) {
      // The store could not be reached even after the retries: one more round, as for a dropped body.
      if (!isRetryable(error) || resumes >= job.maxResumes) throw error;
      resumes += 1;
      continue;
    }
    if (response.status !== 206) {
      discardBody(response.body);
      throw new RangesIgnored();
    }
    const range = header(response, 'content-range');
    const match = range === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range.trim());
    if (!match || Number(match[1]) !== from || Number(match[2]) !== span.end - 1) {
      discardBody(response.body);
      throw new ProtocolError(
        `GET ${job.shown}: asked for bytes ${from}-${span.end - 1} but the answer holds ${range ?? 'no Content-Range'}; refusing to splice it.`,
      );
    }
    const local: ObjectState = { written: from, total: span.end, etag: state.etag };
    const outcome = await pump(response.body, job.part, local, undefined, signal, (position) => {
      span.done = position - span.start;
      progress();
    });
    received += outcome.position - from;
    span.done = outcome.position - span.start;
    if (signal?.aborted) throw abortedError(signal);
    if (outcome.position === span.end) return received;
    if (resumes >= job.maxResumes) {
      const why = outcome.error instanceof Error ? ` (last error: ${outcome.error.message})` : '';
      throw new NetworkError(
        `GET ${job.shown}: the connection kept ending early in bytes ${span.start}-${span.end - 1}; received ${span.done} of them after ${resumes} resumes${why}.`,
        {
          code: 'E_INCOMPLETE',
          cause: outcome.error,
          peer: 'object store',
          hint: 'Run the download again: it resumes where this one stopped.',
        },
      );
    }
    resumes += 1;
  }
}
