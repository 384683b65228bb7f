import { dirname } from 'node:path';
import { abortedError } from '../../core/batch.js';
import type { ExpectedChecksum, PartChecksum } from '../../core/checksums/checksum.js';
import { ApiError } from '../../core/errors.js';
import { Attempts, type RetryPolicy } from '../../core/failure-policy.js';
import { displayUrl } from '../../core/urls.js';
import { checkFreeSpace } from '../../data-root/index.js';
import { discardBody } from '../../http/body.js';
import type { ObjectResponse } from '../../http/objects.js';
import { statedChecksum } from '../../http/stated-digest.js';
import type { ObjectSource, ObjectState, RangedPlan } from '../part/object-state.js';
import type { PartFile } from '../part/part-file.js';
import { recordQuietly, streamRecorder } from '../part/progress-record.js';
import { bodyEndedEarly, pump } from '../part/pump.js';
import { takeSmallBody } from '../part/small-body.js';
import { receiveRanges, splits } from '../ranged/ranged.js';
import { RangesIgnored } from '../ranged/span-fetch.js';
import { acceptResponse, emptyPart, lastByte, restartState } from './answer-check.js';
import { ChecksumUnavailable, checksumFor, type ReceivedObject, verified } from './object-checksum.js';

/** One object to receive. */
export interface ReceiveJob {
  http: ObjectSource;
  /** The pre-signed object URL. */
  url: string;
  part: PartFile;
  /** What is on disk and known of the object; the caller keeps it to leave the part for a later run. */
  state: ObjectState;
  signal?: AbortSignal | undefined;
  /** How often an attempt that failed is tried again (the failure policy's count and backoff). */
  retryPolicy: RetryPolicy;
  /** Bytes of the object received so far, and its size once known. */
  onBytes?: ((received: number, total: number | undefined) => void) | undefined;
  /** How to split a large object over several connections; undefined: one stream. */
  ranged?: RangedPlan | undefined;
  /** Refuse an object whose answer states no checksum to check it against (`E_UNVERIFIED`). */
  requireChecksum?: boolean | undefined;
}

/** Objects at least this large get their part's record written as soon as they start (a kill can resume them). */
const RECORD_FROM_BYTES = 8 * 1024 * 1024;

/**
 * A whole object at most this large is taken in one step (`receiveSmall`): most files of a batch are, and the
 * pump's machinery cost them more than their bytes did. Below RECORD_FROM_BYTES, and below the size from which
 * `checkFreeSpace` looks at the disk's room.
 */
const SMALL_ANSWER_BYTES = 256 * 1024;

/**
 * Streams the object into the part file, hashing it on the way, resuming after dropped connections (and from
 * what an earlier run left, while the object is unchanged), and checks it against the store's checksum.
 */
export async function receiveObject(job: ReceiveJob): Promise<ReceivedObject> {
  const receiver = new ObjectReceiver(job);
  try {
    return await receiver.receive();
  } finally {
    receiver.close();
  }
}

/**
 * One object's receiving, attempt after attempt: each asks for what is not on disk yet and takes the answer as
 * one stream or, split, over several connections, until the object is whole or the attempts run out.
 */
class ObjectReceiver {
  /** The URL as messages show it (the query string of a pre-signed URL is a credential); made when one needs it. */
  #shown: string | undefined;
  private readonly showUrl = (): string => {
    this.#shown ??= displayUrl(new URL(this.job.url));
    return this.#shown;
  };
  private readonly report: (received: number) => void;
  private readonly state: ObjectState;
  /** The checksum of the bytes on disk; undefined until an answer says which, and again after a restart. */
  private checksum: PartChecksum | undefined;
  /** Every checksum begun, closed at the end (a restart may leave one behind). */
  private readonly hashers: PartChecksum[] = [];
  private expected: ExpectedChecksum | undefined;
  /** Bytes that came over the network in this run. */
  private transferred = 0;
  /** One count of attempts for the whole object: a request that failed and a body that ended early alike. */
  private readonly attempts: Attempts;
  private ranged: RangedPlan | undefined;
  /** Whether the disk's room is still to be checked for the object whose checksum was just begun. */
  private roomToCheck = false;

  constructor(private readonly job: ReceiveJob) {
    this.state = job.state;
    // Holds only what it reports: a callback kept a little longer (by a body, a timer) then pins no receiver,
    // and 12,000 small files peak 10-30 MiB lower.
    const { onBytes, state } = job;
    this.report = (received: number) => onBytes?.(received, state.total);
    this.attempts = new Attempts(job.retryPolicy, job.signal);
    this.ranged = job.ranged;
  }

  close(): void {
    for (const hasher of this.hashers) hasher.close();
  }

  async receive(): Promise<ReceivedObject> {
    const { part, signal } = this.job;
    const state = this.state;
    if (state.written === 0 && part.resumed && state.finished === undefined) part.truncate();
    for (;;) {
      if (signal?.aborted) throw abortedError(signal);
      // A part with bytes on disk is resumed with a range of the same object (If-Match), even from byte 0 when
      // only parts after the first are there.
      const resuming = state.written > 0 || state.finished !== undefined;
      const response = await this.request(resuming);
      if (!response || !this.accept(response, resuming)) continue;
      const split = this.ranged && splits(response, state, this.ranged) ? this.ranged : undefined;
      const done =
        !split && this.small(response)
          ? await this.receiveSmall(response)
          : await this.receiveLarge(response, split);
      if (done) return done;
    }
  }

  /**
   * Whether an accepted answer not worth splitting is a whole object small enough to be taken in one step
   * (`receiveSmall`): a 200 of a stated length of at most SMALL_ANSWER_BYTES.
   */
  private small(response: ObjectResponse): boolean {
    const { total } = this.state;
    return response.status === 200 && total !== undefined && total <= SMALL_ANSWER_BYTES;
  }

  /**
   * Any other answer: the disk's room checked for a new object, then split over the connections of `split` (the
   * plan, when the answer is worth splitting) or streamed through the pump.
   */
  private async receiveLarge(
    response: ObjectResponse,
    split: RangedPlan | undefined,
  ): Promise<ReceivedObject | undefined> {
    if (this.roomToCheck) {
      this.roomToCheck = false;
      const { part } = this.job;
      const state = this.state;
      if (state.total !== undefined) {
        await checkFreeSpace(dirname(part.path), state.total - state.written, part.destination).catch(
          (error: unknown) => {
            discardBody(response.body);
            throw error;
          },
        );
      }
    }
    return split ? await this.receiveSplit(response, split) : await this.receiveStream(response);
  }

  /** Whether the object is large enough for its part to be recorded as it lands (a kill can resume it). */
  private recording(): boolean {
    return (this.state.total ?? 0) >= RECORD_FROM_BYTES && this.state.etag !== undefined;
  }

  /** The answer to the next request; undefined to ask again (a failure counted, or a changed object restarted). */
  private async request(resuming: boolean): Promise<ObjectResponse | undefined> {
    const { http, url, part, signal } = this.job;
    const state = this.state;
    const start = state.written;
    try {
      return await http.getObject(
        url,
        resuming
          ? { start, end: start === 0 ? lastByte(state) : undefined, ifMatch: state.etag, signal }
          : { signal },
      );
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 412)) {
        await this.attempts.failed(error);
        return undefined;
      }
      // The object changed since the part was started: what is on disk belongs to another version.
      restartState(state, part);
      this.checksum = undefined;
      return undefined;
    }
  }

  /** Checks an answer against what is on disk and readies the checksum; false when it is to be asked again. */
  private accept(response: ObjectResponse, resuming: boolean): boolean {
    const { part } = this.job;
    try {
      const verdict = acceptResponse(
        response,
        this.state,
        this.showUrl,
        this.checksum === undefined && resuming,
      );
      if (verdict === 'stale') {
        discardBody(response.body);
        restartState(this.state, part);
        return false;
      }
      if (verdict === 'restart') {
        // The body starts at byte 0 (a 200, perhaps to a Range request): what is on disk is written again.
        emptyPart(this.state, part);
        this.checksum = undefined;
      }
      if (this.checksum === undefined) this.beginChecksum(response);
      return true;
    } catch (error) {
      discardBody(response.body);
      throw error;
    }
  }

  /**
   * The checksum the answer states, begun over the bytes on disk; the part recorded, and the disk's room to be
   * checked before a large body is taken (`receiveLarge`; `checkFreeSpace` does not look for a small one).
   */
  private beginChecksum(response: ObjectResponse): void {
    const { part } = this.job;
    const state = this.state;
    // A resumed answer (206) states at most the digest its URL carries, a Repr-Digest or an ETag that may be the
    // MD5: the checksum an earlier answer stated for the whole object, kept in the part's record, checks the
    // resumed object as it did the first.
    const recorded = response.status === 206 ? state.expected : undefined;
    const whole = response.status === 200;
    this.expected = statedChecksum(response.headers, whole, response.statedDigest) ?? recorded;
    state.expected = this.expected;
    if (this.expected === undefined && this.job.requireChecksum)
      throw new ChecksumUnavailable(this.showUrl());
    const split = this.ranged !== undefined && splits(response, state, this.ranged);
    const checksum = checksumFor(this.expected?.algorithm, part, state.total, split);
    this.checksum = checksum;
    this.hashers.push(checksum);
    // Bytes an earlier answer (or an earlier run) wrote count toward the checksum too.
    if (state.written > 0) checksum.catchUp(state.written);
    // The record only lets a later run resume: one that cannot be written (held open elsewhere, on Windows)
    // costs a resume, never this download.
    if (this.recording()) recordQuietly(part, state);
    this.roomToCheck = true;
  }

  /**
   * This answer carries the first part; the other parts are asked for over more connections meanwhile.
   * Undefined when the store answered a part with the whole object: then one stream, from the start.
   */
  private async receiveSplit(
    response: ObjectResponse,
    plan: RangedPlan,
  ): Promise<ReceivedObject | undefined> {
    const { http, url, part, signal } = this.job;
    const checksum = this.checksum as PartChecksum;
    try {
      this.transferred += await receiveRanges({
        http,
        url,
        shown: this.showUrl(),
        part,
        state: this.state as ObjectState & { total: number; etag: string },
        checksum,
        plan,
        retryPolicy: this.job.retryPolicy,
        signal,
        report: this.report,
        firstBody: response.body,
      });
    } catch (error) {
      if (!(error instanceof RangesIgnored)) throw error;
      this.ranged = undefined;
      restartState(this.state, part);
      this.checksum = undefined;
      return undefined;
    }
    return await verified(this.showUrl, checksum, this.expected, this.state.written, this.transferred);
  }

  /**
   * A small whole answer into an empty part, without the pump (`takeSmallBody`), then checked. Undefined when the
   * body ended early (a failed attempt, counted): the bytes that came are written first, and the next answer
   * resumes after them.
   */
  private async receiveSmall(response: ObjectResponse): Promise<ReceivedObject | undefined> {
    const { part, signal } = this.job;
    const checksum = this.checksum as PartChecksum;
    const total = this.state.total as number;
    const { taken, ended } = await takeSmallBody(response.body, part, checksum, total, signal);
    this.state.written = taken;
    this.transferred += taken;
    if (taken > 0) this.report(taken);
    if (signal?.aborted) throw abortedError(signal);
    if (ended === undefined && taken === total)
      return await verified(this.showUrl, checksum, this.expected, taken, this.transferred);
    await this.attempts.failed(
      bodyEndedEarly(this.showUrl(), { position: taken, error: ended }, total),
      taken > 0,
    );
    return undefined;
  }

  /** The answer's body as one stream; undefined when it ended early (counted as a failed attempt). */
  private async receiveStream(response: ObjectResponse): Promise<ReceivedObject | undefined> {
    const { part, signal } = this.job;
    const state = this.state;
    const checksum = this.checksum as PartChecksum;
    const before = state.written;
    const outcome = await pump({
      body: response.body,
      part,
      from: state.written,
      total: state.total,
      checksum,
      signal,
      report: this.report,
      written: this.recording() ? streamRecorder(part, state) : undefined,
    });
    state.written = outcome.position;
    this.transferred += outcome.position - before;
    if (signal?.aborted) throw abortedError(signal);
    const complete =
      (state.total !== undefined && state.written === state.total) ||
      (outcome.error === undefined && state.total === undefined);
    if (complete)
      return await verified(this.showUrl, checksum, this.expected, state.written, this.transferred);
    // A dropped connection, a stall or a short body: resume from the bytes on disk.
    await this.attempts.failed(
      bodyEndedEarly(this.showUrl(), outcome, state.total),
      outcome.position > before,
    );
    return undefined;
  }
}
