/**
 * What is known of an object being received, shared by the stream (`receive.ts`), the parallel ranges
 * (`ranged.ts`, `span-fetch.ts`) and the pump that writes both: it sits below them all so none of them imports
 * another's types.
 */
import type { HttpClient } from '../service/client.js';
import type { PartFile } from './part-file.js';

/** The part of the service client receiving uses. */
export type ObjectSource = Pick<HttpClient, 'getObject'>;

/** How a large object is split. */
export interface RangedPlan {
  /** Bytes per part. */
  partSize: number;
  /** Parts fetched at once, when fixed (`--connections`); ignored with `adaptive`. */
  connections: number;
  /** Start with one connection and open more while they raise the throughput (see `adaptive.ts`). */
  adaptive?: { max: number; windowMs?: number | undefined } | undefined;
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
}

/** The state of a part to receive into: what a resumed part holds, or nothing. */
export function initialState(part: PartFile): ObjectState {
  const resumed = part.resumed;
  return resumed && resumed.etag !== undefined
    ? { written: resumed.written, total: resumed.size, etag: resumed.etag, finished: resumed.parts }
    : { written: 0, total: undefined, etag: undefined };
}
