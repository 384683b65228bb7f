/**
 * One connection's share of a parallel ranged download (see `ranged.ts`): a part fetched with a Range request and
 * resumed after dropped connections, or read from the first answer, which carries on into the parts after it
 * while no other connection has taken them.
 */

import { abortedError } from '../../core/batch.js';
import type { ChecksumFeed, PartChecksum } from '../../core/checksums/checksum.js';
import { ProtocolError } from '../../core/errors.js';
import { Attempts, type RetryPolicy } from '../../core/failure-policy.js';
import { type AnswerBody, discardBody } from '../../http/body.js';
import { header } from '../../http/objects.js';
import type { ObjectSource, ObjectState, RangedPlan } from '../part/object-state.js';
import type { PartFile } from '../part/part-file.js';
import { bodyEndedEarly, pump } from '../part/pump.js';
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
  return new SpanFetch(job, first, hooks).run();
}

/** One connection's span on its way to disk: the span it is on, its attempts, and the bytes it received. */
class SpanFetch {
  private span: Span;
  /** The attempts of this connection's part: a request that failed and a body that ended early alike. */
  private readonly attempts: Attempts;
  private received = 0;
  /**
   * A checksum that joins ranges hashed apart (CRC-32) is fed each span's bytes as they arrive, from where each
   * answer starts writing; any other reads the spans back once the bytes before them are in.
   */
  private feed: ChecksumFeed | undefined;
  private readonly hashing: ChecksumFeed | undefined;

  constructor(
    private readonly job: RangedJob,
    first: Span,
    private readonly hooks: SpanHooks,
  ) {
    this.span = first;
    this.attempts = new Attempts(job.retryPolicy, job.signal);
    this.hashing =
      job.checksum.feedFrom === undefined
        ? undefined
        : { update: (chunk: Buffer) => this.feed?.update(chunk) };
  }

  /** Bytes of the object on disk up to `position`: the span's progress, and what came over the network. */
  private readonly onPosition = (position: number): void => {
    const span = this.span;
    const now = position - span.start;
    if (now > span.done) {
      this.received += now - span.done;
      this.hooks.received(now - span.done);
    }
    span.done = now;
    this.hooks.progress();
  };

  private readonly onWritten = (position: number): void => {
    const span = this.span;
    const now = position - span.start;
    if (now <= span.onDisk) return;
    const bytes = now - span.onDisk;
    span.onDisk = now;
    this.hooks.written(bytes);
  };

  async run(): Promise<number> {
    const { signal } = this.job;
    let body = this.hooks.initial;
    for (;;) {
      if (signal?.aborted) throw abortedError(signal);
      const from = this.span.start + this.span.done;
      if (body) {
        const whole = body;
        body = undefined;
        if (await this.readCarried(whole, from)) return this.received;
        continue;
      }
      const response = await this.request(from);
      if (response && (await this.readAnswer(response, from))) return this.received;
    }
  }

  /** Reads the first answer into the span and on into the spans after it; true when it ended at a span's end. */
  private async readCarried(whole: AnswerBody, from: number): Promise<boolean> {
    const { job, hooks } = this;
    const { signal } = job;
    this.feed = job.checksum.feedFrom?.(from);
    const outcome = await pump({
      body: whole,
      part: job.part,
      from,
      total: job.state.total,
      checksum: this.hashing,
      signal,
      report: this.onPosition,
      written: this.onWritten,
      limit: this.span.end,
      extend: (position) => {
        this.onPosition(position);
        const next = hooks.following(this.span);
        if (next === undefined) return undefined;
        this.span = next;
        hooks.onSpan(next);
        this.feed = job.checksum.feedFrom?.(next.start);
        return next.end;
      },
    });
    this.onPosition(outcome.position);
    if (signal?.aborted) throw abortedError(signal);
    return outcome.position === this.span.end;
  }

  /**
   * The answer to a request for the rest of the span, checked to hold exactly those bytes; undefined after a
   * failed request (counted), to ask again.
   */
  private async request(from: number): Promise<Awaited<ReturnType<ObjectSource['getObject']>> | undefined> {
    const { http, url, state, signal } = this.job;
    const end = this.span.end;
    let response: Awaited<ReturnType<ObjectSource['getObject']>>;
    try {
      response = await http.getObject(url, { start: from, end: end - 1, ifMatch: state.etag, signal });
    } catch (error) {
      await this.attempts.failed(error);
      return undefined;
    }
    if (response.status !== 206) {
      discardBody(response.body);
      throw new RangesIgnored();
    }
    const range = header(response, 'content-range');
    const match = range === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range.trim());
    if (!match || Number(match[1]) !== from || Number(match[2]) !== end - 1) {
      discardBody(response.body);
      throw new ProtocolError(
        `GET ${this.job.shown}: asked for bytes ${from}-${end - 1} but the answer holds ${range ?? 'no Content-Range'}; refusing to splice it.`,
      );
    }
    return response;
  }

  /** Reads a ranged answer into the span; true when the span is whole, false after a body that ended early. */
  private async readAnswer(
    response: Awaited<ReturnType<ObjectSource['getObject']>>,
    from: number,
  ): Promise<boolean> {
    const { job } = this;
    const { signal } = job;
    this.feed = job.checksum.feedFrom?.(from);
    const outcome = await pump({
      body: response.body,
      part: job.part,
      from,
      total: this.span.end,
      checksum: this.hashing,
      signal,
      report: this.onPosition,
      written: this.onWritten,
    });
    this.onPosition(outcome.position);
    if (signal?.aborted) throw abortedError(signal);
    if (outcome.position === this.span.end) return true;
    await this.attempts.failed(bodyEndedEarly(job.shown, outcome, job.state.total), outcome.position > from);
    return false;
  }
}
