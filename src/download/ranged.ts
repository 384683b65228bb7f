/**
 * Parallel ranged downloads: a large object is fetched as parts over several connections at once, each part
 * written at its offset in the part file, resumed on its own after a dropped connection, and hashed in order
 * as soon as the bytes before it are in, so the whole object is still checked against the store's checksum.
 * Object stores cap what one connection carries; every fast client of them (aws-cli, rclone, aria2) splits.
 * Unless the number is fixed, the split is measured as it goes: one connection first, more while they pay.
 */

import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ProtocolError } from '../core/errors.js';
import { discardBody } from '../http/objects.js';
import { ConnectionController, ThroughputWindow } from './adaptive.js';
import { fetchSpan, type RangedJob, type Span } from './span-fetch.js';

/** Default bytes per part: large enough that per-request costs vanish, small enough to spread over connections. */
export const DEFAULT_PART_SIZE = 16 * 1024 * 1024;

export type { RangedPlan } from './object-state.js';
export { RangesIgnored } from './span-fetch.js';

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
      spans.push({
        start: at,
        end: Math.min(end, at + plan.partSize),
        done: 0,
        finished: false,
        claimed: false,
      });
    }
  };
  for (const [from, to] of state.finished ?? []) {
    if (from <= at || to > state.total) continue;
    missing(from);
    spans.push({ start: from, end: to, done: to - from, finished: true, claimed: true });
    at = to;
  }
  missing(state.total);
  let next = 0;
  let transferred = 0;
  let firstFailure: unknown;
  /** Bytes received over the network so far, for the throughput the controller is fed. */
  let receivedNow = 0;
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
  const adaptive = plan.adaptive;
  const controller = adaptive ? new ConnectionController({ max: adaptive.max }) : undefined;
  const meter = new ThroughputWindow(adaptive?.windowMs);
  const wanted = () => controller?.connections ?? plan.connections;
  // The first window opens after one of warming up (the first answer's slow start, the hashing thread's start,
  // which would make a second connection look like a gain on a link one fills); each later one half a window
  // after the step's last new connection carried its first byte.
  let warmingUntil = controller ? performance.now() + meter.windowMs : undefined;
  /** Connections of the newest step that have not received a byte yet: its window opens once they all have. */
  let awaitingFirstBytes = 0;
  let active = 0;
  const workers: Array<Promise<void>> = [];
  const claimFront = (): Span | undefined => {
    while (next < spans.length && (spans[next] as Span).claimed) next += 1;
    const span = spans[next];
    if (span === undefined || firstFailure !== undefined) return undefined;
    span.claimed = true;
    next += 1;
    return span;
  };
  // The first step up takes the last part: the first answer streams on untouched, and if the second connection
  // gains nothing it ends with its part, so a link one connection fills is not split any further.
  const claimLast = (): Span | undefined => {
    for (let index = spans.length - 1; index > next; index -= 1) {
      const span = spans[index] as Span;
      if (span.claimed) continue;
      span.claimed = true;
      return span;
    }
    return undefined;
  };
  /** True while the first step up is measured: its connection takes parts from the end. */
  let probing = false;
  const decide = () => {
    if (!controller || controller.settled || awaitingFirstBytes > 0) return;
    if (warmingUntil !== undefined) {
      const now = performance.now();
      if (now < warmingUntil) return;
      warmingUntil = undefined;
      meter.start(now, receivedNow);
      return;
    }
    const throughput = meter.read(performance.now(), receivedNow);
    if (throughput === undefined) return;
    const before = active;
    const decision = controller.observe(throughput);
    probing = decision === 'grow' && before === 1;
    if (decision === 'hold') return;
    while (active < wanted()) {
      const span = probing ? claimLast() : claimFront();
      if (span === undefined) break;
      awaitingFirstBytes += 1;
      start(span);
    }
    if (active === before) controller.settle();
  };
  const received = (bytes: number, first: boolean) => {
    receivedNow += bytes;
    if (first && awaitingFirstBytes > 0) {
      awaitingFirstBytes -= 1;
      if (awaitingFirstBytes === 0) warmingUntil = performance.now() + meter.windowMs / 2;
    }
    decide();
  };
  // A body that reaches the end of its part carries on into the next one when no connection has taken it.
  const following = (span: Span): Span | undefined => {
    const after = spans[next];
    if (after === undefined || after.claimed || after.start !== span.end) return undefined;
    return claimFront();
  };
  const finished = (span: Span) => {
    span.finished = true;
    advance();
    finishedSinceRecord += 1;
    if (finishedSinceRecord >= RECORD_EVERY_PARTS) recordProgress();
  };
  const run = async (first: Span, initial: Readable | undefined) => {
    let span: Span | undefined = first;
    let fresh = true;
    while (span !== undefined) {
      const fetching: Span = span;
      try {
        const got = await fetchSpan(job, fetching, {
          progress,
          received: (bytes) => {
            received(bytes, fresh);
            fresh = false;
          },
          following: (done) => {
            finished(done);
            return following(done);
          },
          initial: fetching === first ? initial : undefined,
          onSpan: (next) => {
            span = next;
          },
        });
        // Added after the await: `transferred += await …` would add to the value read before it.
        transferred += got;
      } catch (error) {
        firstFailure ??= error;
        return;
      }
      finished(span);
      // While the first step up is measured, parts come from the end, then from the front once none is left there.
      span = active > wanted() ? undefined : probing ? (claimLast() ?? claimFront()) : claimFront();
    }
  };
  function start(span: Span, initial?: Readable): void {
    active += 1;
    workers.push(run(span, initial).finally(() => (active -= 1)));
  }
  const first = claimFront();
  if (first) start(first, job.firstBody);
  else if (job.firstBody) discardBody(job.firstBody);
  for (let opened = 1; opened < Math.min(wanted(), spans.length); opened += 1) {
    const span = claimFront();
    if (span) start(span);
  }
  // Workers started while others run are pushed as they start: wait for every one of them.
  for (let index = 0; index < workers.length; index += 1) {
    await workers[index];
    // Never ends with parts left that no connection took: the last one to end takes them up.
    if (index === workers.length - 1 && firstFailure === undefined) {
      const span = claimFront();
      if (span) start(span);
    }
  }
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
