/**
 * What is known of an object being received, shared by the stream (`receive.ts`), the parallel ranges
 * (`ranged.ts`, `span-fetch.ts`) and the pump that writes both: it sits below them all so none of them imports
 * another's types.
 */
import type { ExpectedChecksum } from '../../core/checksums/checksum.js';
import type { HttpClient } from '../../service/client.js';
import type { PartFile } from './part-file.js';
import { fromRecorded, type PartRecord, toRecorded } from './part-leftovers.js';

/** The part of the service client receiving uses. */
export type ObjectSource = Pick<HttpClient, 'getObject'>;

/** How a large object is split. */
export interface RangedPlan {
  /** Bytes per part. */
  partSize: number;
  /** Parts fetched at once, when fixed (`--connections`); ignored with `adaptive`. */
  connections: number;
  /** Start with `initial` connections and open more while they raise the throughput (see `adaptive.ts`). */
  adaptive?:
    | {
        max: number;
        initial?: number | undefined;
        windowMs?: number | undefined;
        /**
         * Look at the first connection alone before opening more (see `moreConnectionsCanPay`): when nothing was
         * learned of the host yet. A number learned there is where the last download settled, look included.
         */
        look?: boolean | undefined;
        /** Told what the download's measurements showed, when they showed something (see `LearnedConnections`). */
        onDecided?: ((connections: number) => void) | undefined;
      }
    | undefined;
}

/** What is on disk of an object and what is known of it. */
export interface ObjectState {
  /** Bytes of the object safely written to the part file. */
  written: number;
  /** The object's size, once an answer told it. */
  total: number | undefined;
  /** The object's ETag, once an answer told it; a different one later means the object changed. */
  etag: string | undefined;
  /** Byte ranges `[start, end)` after `written` also on disk (parts fetched in parallel finish out of order). */
  finished?: Array<[number, number]> | undefined;
  /**
   * The checksum the store stated for the whole object, once an answer stated one. Kept in the part's record:
   * S3 states `x-amz-checksum-*` on whole-object answers only, so a resumed part may meet none.
   */
  expected?: ExpectedChecksum | undefined;
}

/** What is on disk beside the contiguous prefix: `written` from byte 0 and the ranges after it. */
export interface HeldBytes {
  written: number;
  parts: Array<[number, number]> | undefined;
}

/**
 * The bytes on disk as a record names them, from the hashed prefix `written` and the ranges `[start, end)` on
 * disk (any order, overlapping or not): ranges that reach the prefix extend it, the rest are merged, in order
 * and apart, as `finishedRanges` (part-leftovers.ts) accepts them on the way back.
 */
export function heldBytes(written: number, ranges: Iterable<readonly [number, number]>): HeldBytes {
  const sorted = [...ranges].filter(([from, to]) => to > from).sort((a, b) => a[0] - b[0]);
  let prefix = written;
  const parts: Array<[number, number]> = [];
  for (const [from, to] of sorted) {
    const last = parts.at(-1);
    if (last === undefined && from <= prefix) prefix = Math.max(prefix, to);
    else if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else parts.push([from, to]);
  }
  return { written: prefix, parts: parts.length > 0 ? parts : undefined };
}

/** The part's record of `state`, or of the bytes `held` when more is on disk than `state` says (parts in flight). */
export function stateRecord(state: ObjectState, held?: HeldBytes): Omit<PartRecord, 'pid' | 'host'> {
  return {
    etag: state.etag,
    size: state.total,
    written: held?.written ?? state.written,
    parts: held ? held.parts : state.finished,
    checksum: toRecorded(state.expected),
  };
}

/** The state of a part to receive into: what a resumed part holds, or nothing. */
export function initialState(part: PartFile): ObjectState {
  const resumed = part.resumed;
  return resumed && resumed.etag !== undefined
    ? {
        written: resumed.written,
        total: resumed.size,
        etag: resumed.etag,
        finished: resumed.parts,
        expected: fromRecorded(resumed.checksum),
      }
    : { written: 0, total: undefined, etag: undefined };
}
