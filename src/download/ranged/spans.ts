/**
 * The parts of a parallel ranged download (see `ranged.ts`) and what is on disk of each: which part a
 * connection takes next, the hashing of the parts in order as soon as the bytes before them are in, and the
 * bytes on disk as the part's record names them. No I/O but the checksum's reading back.
 */
import type { PartChecksum } from '../../core/checksums/checksum.js';
import { type HeldBytes, heldBytes, type ObjectState } from '../part/object-state.js';

/** One part of the object. */
export interface Span {
  start: number;
  /** Exclusive. */
  end: number;
  /** Bytes of this span received, from `start` (on disk once its answer has ended). */
  done: number;
  /** Bytes of this span written to the part, from `start`: what the record may name. */
  onDisk: number;
  finished: boolean;
  /** Taken by a connection (or finished). */
  claimed: boolean;
}

/** A span of `[start, end)` that no connection has taken. */
function openSpan(start: number, end: number): Span {
  return { start, end, done: 0, onDisk: 0, finished: false, claimed: false };
}

/**
 * The spans of the object from the first byte not on disk: the bytes missing as spans of `partSize` (or less,
 * at a gap's end), and the ranges an earlier run left on disk after the first missing byte (its record names
 * them, whole parts or the written start of one) as finished spans, which are not asked for again and which
 * the checksum reads back.
 */
export function spansOf(state: ObjectState & { total: number }, partSize: number): Span[] {
  const spans: Span[] = [];
  let at = state.written;
  const missing = (end: number) => {
    for (; at < end; at = Math.min(end, at + partSize))
      spans.push(openSpan(at, Math.min(end, at + partSize)));
  };
  for (const [from, to] of state.finished ?? []) {
    if (from <= at || to > state.total) continue;
    missing(from);
    spans.push({ start: from, end: to, done: to - from, onDisk: to - from, finished: true, claimed: true });
    at = to;
  }
  missing(state.total);
  return spans;
}

/** The spans of one download, and which of them are taken, finished and hashed. */
export class SpanBook {
  readonly spans: Span[];
  readonly #state: ObjectState & { total: number };
  readonly #checksum: PartChecksum;
  /** The first span that may not be taken yet. */
  #next = 0;
  #closed = false;

  constructor(state: ObjectState & { total: number }, partSize: number, checksum: PartChecksum) {
    this.#state = state;
    this.#checksum = checksum;
    this.spans = spansOf(state, partSize);
    this.advance();
  }

  /** No span is handed out any more (a connection failed). */
  close(): void {
    this.#closed = true;
  }

  /** The first span no connection has taken, now taken; undefined when none is left (or after `close`). */
  claimFront(): Span | undefined {
    while (this.#next < this.spans.length && (this.spans[this.#next] as Span).claimed) this.#next += 1;
    const span = this.spans[this.#next];
    if (span === undefined || this.#closed) return undefined;
    span.claimed = true;
    this.#next += 1;
    return span;
  }

  /** The last span no connection has taken (never the front one), now taken. */
  claimLast(): Span | undefined {
    if (this.#closed) return undefined;
    for (let index = this.spans.length - 1; index > this.#next; index -= 1) {
      const span = this.spans[index] as Span;
      if (span.claimed) continue;
      span.claimed = true;
      return span;
    }
    return undefined;
  }

  /** The span right after `span`, taken, when no connection has taken it: a body carries on into it. */
  following(span: Span): Span | undefined {
    const after = this.spans[this.#next];
    if (after === undefined || after.claimed || after.start !== span.end) return undefined;
    return this.claimFront();
  }

  /** `span` is on disk whole. */
  finish(span: Span): void {
    span.finished = true;
    this.advance();
  }

  /**
   * Adds every finished span that follows the hashed prefix to the checksum: it joins the CRC-32 it took of the
   * span's bytes as they came (`CombinedCrc32`), or reads the span back from the page cache.
   */
  advance(): void {
    const state = this.#state;
    for (const span of this.spans) {
      if (span.start !== state.written || !span.finished) continue;
      this.#checksum.catchUp(span.end);
      state.written = span.end;
    }
  }

  /** Bytes of the object received so far: the hashed prefix and what the spans after it hold. */
  received(): number {
    let total = this.#state.written;
    for (const span of this.spans) if (span.start >= this.#state.written) total += span.done;
    return total;
  }

  /** The bytes on disk, as the part's record names them: finished spans and the written start of the others. */
  held(): HeldBytes {
    return heldBytes(
      this.#state.written,
      this.spans.map((span): [number, number] => [span.start, span.start + span.onDisk]),
    );
  }

  /** True once the hashed prefix covers the object. */
  get complete(): boolean {
    return this.#state.written === this.#state.total;
  }
}
