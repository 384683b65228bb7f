/**
 * One connection's share of a parallel ranged download (see `ranged.ts`): a part fetched with a Range request and
 * resumed after dropped connections, or read from the first answer, which carries on into the parts after it
 * while no other connection has taken them.
 */

import { abortedError } from '../core/batch.js';
import type { ChecksumFeed, PartChecksum } from '../core/checksums/checksum.js';
import { ProtocolError } from '../core/errors.js';
import { Attempts, type RetryPolicy } from '../core/failure-policy.js';
import { type AnswerBody, discardBody } from '../http/body.js';
import { header } from '../http/objects.js';
import type { ObjectSource, ObjectState, RangedPlan } from './object-state.js';
import type { PartFile } from './part-file.js';
import { bodyEndedEarly, pump } from './pump.js';
import type { Span } from './spans.js';

/** A part request was answered with the whole object: the store does not honour ranges after all. */
export class RangesIgnored extends Error {}

/** A ranged download of one object. */
export interface RangedJob {
  http: ObjectSource;
  url: string;
  /** The URL as messages show it. */
  shown: string;
  part: PartFile;
  /** `written` is the contiguous prefix on disk (and hashed); `total` and `etag` are known. */
  state: ObjectState & { total: number; etag: string };
  checksum: PartChecksum;
  plan: RangedPlan;
  /** How often a failed attempt of a part is tried again (the failure policy's count and backoff). */
  retryPolicy: RetryPolicy;
  signal?: AbortSignal | undefined;
  report: (received: number) => void;
  /** The body of the first answer (the whole object, from `state.written`): it carries the first part. */
  firstBody?: AnswerBody | undefined;
}

/** What a span's fetch tells its connection's loop. */
export interface SpanHooks {
  /** Bytes of the object on disk changed. */
  progress: () => void;
  /** This many more bytes came over the network. */
  received: (bytes: number) => void;
  /** This many more bytes of the span are written to the part (`span.onDisk` says how far). */
  written: (bytes: number) => void;
  /** With `initial`: the span is done; the next span the same body may carry on into, if any. */
  following: (done: Span) => Span | undefined;
  /** The span the body carried on into (the one fetched from now on). */
  onSpan: (span: Span) => void;
  /** An answer already under way that starts at the span's first byte and runs to the object's end. */
  initial: AnswerBody | undefined;
}

/**
 * Fetches one span, resuming it after dropped connections; resolves to the bytes received. With `initial`, the
 * first answer (the whole object) is read for this span and, part after part, for as long as no other
 * connection has taken the next one: one connection alone never makes a request more.
 */
export async function fetchSpan(job: RangedJob, first: Span, hooks: SpanHooks): Promise<number> {
  const { http, url, state, signal } = job;
  let span = first;
  // The attempts of this connection's part: a request that failed and a body that ended early alike.
  const attempts = new Attempts(job.retryPolicy, signal);
  let received = 0;
  let body = hooks.initial;
  // A checksum that joins ranges hashed apart (CRC-32) is fed each span's bytes as they arrive, from where each
  // answer starts writing; any other reads the spans back once the bytes before them are in.
  let feed: ChecksumFeed | undefined;
  const hashing =
    job.checksum.feedFrom === undefined ? undefined : { update: (chunk: Buffer) => feed?.update(chunk) };
  const onPosition = (position: number) => {
    const now = position - span.start;
    if (now > span.done) {
      received += now - span.done;
      hooks.received(now - span.done);
    }
    span.done = now;
    hooks.progress();
  };
  const onWritten = (position: number) => {
    const now = position - span.start;
    if (now <= span.onDisk) return;
    const bytes = now - span.onDisk;
    span.onDisk = now;
    hooks.written(bytes);
  };
  for (;;) {
    if (signal?.aborted) throw abortedError(signal);
    const from = span.start + span.done;
    if (body) {
      const whole = body;
      body = undefined;
      feed = job.checksum.feedFrom?.(from);
      const outcome = await pump({
        body: whole,
        part: job.part,
        from,
        total: state.total,
        checksum: hashing,
        signal,
        report: onPosition,
        written: onWritten,
        limit: span.end,
        extend: (position) => {
          onPosition(position);
          const next = hooks.following(span);
          if (next === undefined) return undefined;
          span = next;
          hooks.onSpan(next);
          feed = job.checksum.feedFrom?.(next.start);
          return next.end;
        },
      });
      onPosition(outcome.position);
      if (signal?.aborted) throw abortedError(signal);
      if (outcome.position === span.end) return received;
      continue;
    }
    let response: Awaited<ReturnType<ObjectSource['getObject']>>;
    try {
      response = await http.getObject(url, { start: from, end: span.end - 1, ifMatch: state.etag, signal });
    } catch (error) {
      await attempts.failed(error);
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
    feed = job.checksum.feedFrom?.(from);
    const outcome = await pump({
      body: response.body,
      part: job.part,
      from,
      total: span.end,
      checksum: hashing,
      signal,
      report: onPosition,
      written: onWritten,
    });
    onPosition(outcome.position);
    if (signal?.aborted) throw abortedError(signal);
    if (outcome.position === span.end) return received;
    await attempts.failed(bodyEndedEarly(job.shown, outcome, state.total), outcome.position > from);
  }
}
