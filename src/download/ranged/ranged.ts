/**
 * Parallel ranged downloads: a large object is fetched as parts over several connections at once, each part
 * written at its offset in the part file, resumed on its own after a dropped connection, and hashed in order
 * as soon as the bytes before it are in, so the whole object is still checked against the store's checksum.
 * Object stores cap what one connection carries; every fast client of them (aws-cli, rclone, aria2) splits.
 * Unless the number is fixed, the split is measured as it goes: one connection first, more while they pay.
 */

import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { ProtocolError } from '../../core/errors.js';
import { type AnswerBody, discardBody } from '../../http/body.js';
import { header, type ObjectResponse } from '../../http/objects.js';
import type { ObjectState, RangedPlan } from '../part/object-state.js';
import { RecordCadence, type RecordLane, recordQuietly } from '../part/progress-record.js';
import { ConnectionController, ThroughputWindow, WAITING_SHARE } from './adaptive.js';
import { fetchSpan, type RangedJob } from './span-fetch.js';
import { type Span, SpanBook } from './spans.js';

/** Fetches the rest of the object from `state.written` as parts; resolves to the bytes received over the network. */
export function receiveRanges(job: RangedJob): Promise<number> {
  return new RangedDownload(job).run();
}

/**
 * One ranged download: its spans (`SpanBook`), the connections that fetch them, how many of those to run
 * (fixed, or measured by the adaptive controller), and the part's record, rewritten as bytes land.
 */
export class RangedDownload {
  readonly #job: RangedJob;
  readonly #book: SpanBook;
  /**
   * Parts land out of order, so the part's length does not say what it holds: its record names the bytes on
   * disk (the finished spans and the written start of every other one) for a run that takes it over after this
   * one was killed, on the cadence of `progress-record.ts` (every 4 MiB a connection writes, or every second).
   */
  readonly #cadence: RecordCadence;
  readonly #controller: ConnectionController | undefined;
  readonly #meter: ThroughputWindow;
  readonly #workers: Array<Promise<void>> = [];
  #active = 0;
  /** Bytes received over the network, in all. */
  #transferred = 0;
  /** Bytes received over the network so far, as they come, for the throughput the controller is fed. */
  #receivedNow = 0;
  #failure: { error: unknown } | undefined;
  /**
   * The first window opens after one of warming up (the first answer's slow start, the hashing thread's start,
   * which would make a second connection look like a gain on a link one fills); each later one half a window
   * after the step's last new connection carried its first byte.
   */
  #warmingUntil: number | undefined;
  /** Connections of the newest step that have not received a byte yet: its window opens once they all have. */
  #awaitingFirstBytes = 0;
  /** True while the first step up is measured: its connection takes parts from the end. */
  #probing = false;
  /**
   * With a measured number from a host nothing was learned of yet: the look at the first connection alone,
   * before any other opens (`'pending'` until its first bytes; see `#lookAtOne`).
   */
  #busyLook: 'pending' | { atMs: number; busy: EventLoopUtilization } | undefined;

  constructor(job: RangedJob) {
    this.#job = job;
    this.#book = new SpanBook(job.state, job.plan.partSize, job.checksum);
    this.#cadence = new RecordCadence(() => recordQuietly(job.part, job.state, this.#book.held()));
    const adaptive = job.plan.adaptive;
    this.#controller = adaptive
      ? new ConnectionController({ max: adaptive.max, initial: adaptive.initial })
      : undefined;
    this.#meter = new ThroughputWindow(adaptive?.windowMs);
    this.#warmingUntil = this.#controller ? performance.now() + this.#meter.windowMs : undefined;
    if (this.#controller && adaptive?.look && job.firstBody) this.#busyLook = 'pending';
  }

  /** Runs the download to its end; resolves to the bytes received over the network. */
  async run(): Promise<number> {
    const book = this.#book;
    this.#cadence.record();
    const first = book.claimFront();
    if (first) this.#start(first, this.#job.firstBody);
    else if (this.#job.firstBody) discardBody(this.#job.firstBody);
    for (let opened = 1; opened < Math.min(this.#wanted(), book.spans.length); opened += 1) {
      const span = book.claimFront();
      if (span) this.#start(span);
    }
    // Workers started while others run are pushed as they start: wait for every one of them.
    for (let index = 0; index < this.#workers.length; index += 1) {
      await this.#workers[index];
      // Never ends with parts left that no connection took: the last one to end takes them up.
      if (index === this.#workers.length - 1 && this.#failure === undefined) {
        const span = book.claimFront();
        if (span) this.#start(span);
      }
    }
    if (this.#failure !== undefined) throw this.#failed(this.#failure.error);
    const measured = this.#controller?.measured;
    if (measured !== undefined) this.#job.plan.adaptive?.onDecided?.(measured);
    book.advance();
    if (!book.complete) {
      const { state, shown } = this.#job;
      throw new ProtocolError(
        `GET ${shown}: the parts did not cover the object (${state.written} of ${state.total} bytes).`,
      );
    }
    return this.#transferred;
  }

  /**
   * What lies on disk is kept for the next run: `state` names it (the caller records it with the part), the
   * finished spans and the written start of every other one, the start of the first missing span included.
   */
  #failed(error: unknown): unknown {
    const { state } = this.#job;
    const held = this.#book.held();
    state.written = held.written;
    state.finished = held.parts;
    return error;
  }

  /** Connections to run now. */
  #wanted(): number {
    if (this.#busyLook !== undefined) return 1;
    return this.#controller?.connections ?? this.#job.plan.connections;
  }

  #start(span: Span, initial?: AnswerBody): void {
    this.#active += 1;
    this.#workers.push(this.#connection(span, initial).finally(() => (this.#active -= 1)));
  }

  /** One connection: fetches its span, then the next one it may take, until none is left or it is not wanted. */
  async #connection(first: Span, initial: AnswerBody | undefined): Promise<void> {
    const book = this.#book;
    const lane: RecordLane = this.#cadence.lane();
    let span: Span | undefined = first;
    let fresh = true;
    while (span !== undefined) {
      const fetching: Span = span;
      try {
        const got = await fetchSpan(this.#job, fetching, {
          progress: () => this.#job.report(book.received()),
          received: (bytes) => {
            this.#received(bytes, fresh);
            fresh = false;
          },
          written: (bytes) => lane.wrote(bytes),
          following: (done) => {
            book.finish(done);
            return book.following(done);
          },
          initial: fetching === first ? initial : undefined,
          onSpan: (next) => {
            span = next;
          },
        });
        // Added after the await: `transferred += await …` would add to the value read before it.
        this.#transferred += got;
      } catch (error) {
        this.#failure ??= { error };
        book.close();
        return;
      }
      book.finish(span);
      // While the first step up is measured, parts come from the end, then from the front once none is left there.
      span =
        this.#active > this.#wanted()
          ? undefined
          : this.#probing
            ? (book.claimLast() ?? book.claimFront())
            : book.claimFront();
    }
  }

  #received(bytes: number, first: boolean): void {
    this.#receivedNow += bytes;
    if (this.#busyLook !== undefined) {
      this.#lookAtOne();
      return;
    }
    if (first && this.#awaitingFirstBytes > 0) {
      this.#awaitingFirstBytes -= 1;
      if (this.#awaitingFirstBytes === 0) this.#warmingUntil = performance.now() + this.#meter.windowMs / 2;
    }
    this.#decide();
  }

  /**
   * Before a measured download opens more connections, a look at the first alone (from its first bytes): when it
   * keeps this process's thread so busy that more cannot pay, the download holds at one, for good; when it keeps
   * it busy short of that, more open one step at a time from one; else the first step's connections open. Every
   * step is measured as the windows below say. A third of a window decides; a thread mostly idle (a slow or
   * capped link) is plain after a fifteenth, and more open then.
   */
  #lookAtOne(): void {
    const look = this.#busyLook;
    const now = performance.now();
    if (look === 'pending') {
      this.#busyLook = { atMs: now, busy: performance.eventLoopUtilization() };
      return;
    }
    if (look === undefined) return;
    const elapsed = now - look.atMs;
    const { windowMs } = this.#meter;
    if (elapsed < windowMs / 15) return;
    const { utilization } = performance.eventLoopUtilization(performance.eventLoopUtilization(), look.busy);
    if (elapsed < windowMs / 3 && utilization >= WAITING_SHARE) return;
    this.#busyLook = undefined;
    const controller = this.#controller as ConnectionController;
    // 'hold' and 'step' go on with the one connection; 'step' opens more as the windows below measure them.
    if (controller.observeBusy(utilization) === 'open') this.#openWanted();
  }

  /**
   * The adaptive step: once a window is measured, the controller says whether to open more connections. The
   * first step up takes the last part: the first answer streams on untouched, and if the second connection
   * gains nothing it ends with its part, so a link one connection fills is not split any further.
   */
  #decide(): void {
    const controller = this.#controller;
    if (!controller || controller.settled || this.#awaitingFirstBytes > 0) return;
    if (this.#warmingUntil !== undefined) {
      const now = performance.now();
      if (now < this.#warmingUntil) return;
      this.#warmingUntil = undefined;
      this.#meter.start(now, this.#receivedNow);
      return;
    }
    const throughput = this.#meter.read(performance.now(), this.#receivedNow);
    if (throughput === undefined) return;
    const before = this.#active;
    const decision = controller.observe(throughput);
    this.#probing = decision === 'grow' && before === 1;
    if (decision === 'hold') return;
    this.#openWanted();
    if (this.#active === before) controller.settle();
  }

  /**
   * Opens connections up to the number wanted, each on a span of its own (from the end while the first step up is
   * measured), each awaited for its first bytes before the next window opens.
   */
  #openWanted(): void {
    while (this.#active < this.#wanted()) {
      const span = this.#probing ? this.#book.claimLast() : this.#book.claimFront();
      if (span === undefined) break;
      this.#awaitingFirstBytes += 1;
      this.#start(span);
    }
  }
}

/**
 * True when a first answer (the whole object, from byte 0) is worth splitting: large enough for two parts, of
 * a store that says it serves ranges and names the version (ETag) every part must come from.
 */
export function splits(response: ObjectResponse, state: ObjectState, plan: RangedPlan): boolean {
  // The whole object from a store that says it serves ranges, or the rest of a resumed one (a 206 is itself
  // a range served, from the first byte not on disk).
  const fromHere =
    response.status === 206 ||
    (response.status === 200 &&
      state.written === 0 &&
      /\bbytes\b/i.test(header(response, 'accept-ranges') ?? ''));
  // Worth it with two parts to go, or when parts an earlier run finished out of order are to be skipped.
  const worth =
    state.total !== undefined &&
    (state.total - state.written >= 2 * plan.partSize ||
      (response.status === 206 && state.finished !== undefined));
  return (
    (plan.adaptive !== undefined || plan.connections > 1) && fromHere && worth && state.etag !== undefined
  );
}
