/**
 * The seam between the routes and the records of stored files. The routes see only this interface; the
 * in-memory index (`memory-index.ts`) is one implementation. Every method is asynchronous, so an index kept in
 * a database fits the same routes.
 */

import { parsePath } from '../../naming/names.js';
import type { QueryParameter, QueryRecord, QueryTable } from '../../naming/query-vocabulary.js';
import type { StoredObject } from '../objects/object-store.js';

/**
 * A checked query, by the service's parameter names (the library's `IndexQuery` name them for callers);
 * every filter given must match (AND).
 */
export interface IndexQuery extends Partial<Record<Exclude<QueryParameter, 'table'>, string>> {
  table: QueryTable;
  /** Keep only the highest version per series among the rows that pass the other filters. */
  latest?: boolean;
}

/** Which slice of the ordered answer to return: `limit` records (all when undefined) after the first `offset`. */
export interface QueryPage {
  offset: number;
  limit?: number | undefined;
}

/**
 * The query record (the one the client reads) with what this server always fills in: `end_date` (null for an
 * ancillary file whose name has a single date) and `ingestion_date`, when the object was stored.
 */
export type MetadataRecord = QueryRecord & { end_date: string | null; ingestion_date: string };

/**
 * A name held for an upload that goes straight to the store: no other upload of the name is signed until the
 * reservation is confirmed (the record becomes visible) or released.
 */
export interface Reservation {
  key: string;
  /** Tells this reservation from a later one of the same name. */
  token: string;
  /** When the upload URL signed for it expires (ms since the epoch). */
  urlExpiresAtMs: number;
  /** From when the name may be reserved again, if no object arrived (ms since the epoch). */
  releaseAtMs: number;
  /** The raw Content-MD5 the URL was signed with, if any. */
  md5?: Buffer | undefined;
  /** When the name was reserved (ms since the epoch): the upload started then. */
  reservedAtMs: number;
}

/** What a reservation is made with. */
export interface ReserveOptions {
  urlExpiresAtMs: number;
  releaseAtMs: number;
  md5?: Buffer | undefined;
  /** When the reservation is made; now by default. */
  reservedAtMs?: number | undefined;
}

/** How long a claim on a reservation lasts unless ended: a server killed while confirming loses it by then. */
export const CLAIM_LEASE_MS = 30_000;

/** The records of the archive's files, one per storage path. */
/** The answer of `queryWithPending`. */
export interface QueryWithPending {
  chunks: Buffer[];
  pending: Reservation[];
}

export interface MetadataIndex {
  /** Where the index is, for messages (`memory`, a database URL with its password masked). */
  readonly location: string;
  /** Resolves when the index answers; rejects saying why not. */
  check(): Promise<void>;
  /**
   * Holds `key` for an upload, in one step: undefined when the name has a record or an unreleased reservation
   * (of two servers reserving one name, exactly one gets it). A reservation past its `releaseAtMs` is taken over.
   * A held reservation made with the same `md5` as `options.md5` is the same upload asked again (a re-run after
   * a crash): it is kept (same token, same `reservedAtMs`) with the new URL and release times, and returned.
   */
  reserve(key: string, options: ReserveOptions): Promise<Reservation | undefined>;
  /** Every reservation not yet confirmed or released, the oldest first. */
  pending(): Promise<Reservation[]>;
  /** The reservation `key` is held by, if any (released or past its release time, while still in the index). */
  reservation(key: string): Promise<Reservation | undefined>;
  /** In one look: `stored` when `key` has a record, else the reservation it is held by (as `reservation`), if any. */
  state(key: string): Promise<'stored' | Reservation | undefined>;
  /**
   * Claims `reservation` for confirming it, so that of every server (and every caller of one server) exactly one
   * works on it at a time: a claim id when this caller holds it now, undefined when a claim of someone else is
   * still running or the reservation is no longer held. A claim lapses after `leaseMs`, or when `unclaim`ed.
   */
  claim(reservation: Reservation, leaseMs?: number): Promise<string | undefined>;
  /** Ends the claim `claim` on `reservation` (nothing if it lapsed and another took it). */
  unclaim(reservation: Reservation, claim: string): Promise<void>;
  /**
   * Makes the record of a confirmed object visible and ends its reservation, in one step; false (nothing
   * changed) when that reservation is no longer held (confirmed by another server, or released).
   */
  confirm(reservation: Reservation, object: StoredObject): Promise<boolean>;
  /** Ends a reservation whose object never arrived (or was refused); nothing when it is no longer held. */
  release(reservation: Reservation): Promise<void>;
  /** Adds the records of many stored objects, skipping paths that have one (or a reservation); the number added. */
  addAll(objects: readonly StoredObject[]): Promise<number>;
  /** Lets go of connections; the index is not used after. */
  close(): Promise<void>;
  /** Number of records. */
  count(): Promise<number>;
  /** True when `key` has a record. */
  has(key: string): Promise<boolean>;
  /** The record of `key`, if any. */
  get(key: string): Promise<MetadataRecord | undefined>;
  /** Adds the record of a stored object; false (nothing changed) when its path already has one: one wins. */
  add(object: StoredObject): Promise<boolean>;
  /**
   * The records matching every filter, ordered by `file_path`, as the chunks of one JSON array (a large
   * answer is copied, not serialized); consecutive pages concatenate to the unpaged answer.
   */
  queryChunks(filters: IndexQuery, page?: QueryPage): Promise<Buffer[]>;
  /**
   * `queryChunks` and, of the same moment, the pending reservations whose objects the query could select once
   * confirmed (`couldMatch`): one look at the index, so that a query with no pending upload to wait for answers
   * from it, and one with some looks only at those.
   */
  queryWithPending(filters: IndexQuery, page?: QueryPage): Promise<QueryWithPending>;
  /** Replaces every record by those of `objects` (a store's listing). */
  rebuild(objects: readonly StoredObject[]): Promise<void>;
}

/**
 * True when the file `key` names could be among the answers to `filters`: every filter on the name is
 * checked; ingestion dates and `latest` are not (an upload is ingested when confirmed, and may be the latest),
 * so those keep it in.
 */
export function couldMatch(key: string, filters: IndexQuery): boolean {
  let file: ReturnType<typeof parsePath>;
  try {
    file = parsePath(key);
  } catch {
    return false;
  }
  if (file.kind !== filters.table) return false;
  const dataLevel = file.kind === 'science' ? file.dataLevel : undefined;
  const version = filters.version === 'latest' ? undefined : filters.version;
  return (
    (filters.file_path === undefined || filters.file_path === key) &&
    (filters.instrument === undefined || filters.instrument === file.instrument) &&
    (filters.data_level === undefined || filters.data_level === dataLevel) &&
    (filters.descriptor === undefined || filters.descriptor === file.descriptor) &&
    (filters.start_date === undefined || file.startDate >= filters.start_date) &&
    (filters.end_date === undefined || file.startDate <= filters.end_date) &&
    (version === undefined || versionNumber(version) === versionNumber(file.version)) &&
    (filters.extension === undefined || filters.extension === file.extension)
  );
}

function versionNumber(version: string): number | string {
  const match = /^v(\d+)-(\d+)$/.exec(version);
  return match ? Number(match[1]) * 1_000_000 + Number(match[2]) : version;
}

/**
 * The object as a record added now lists it: its ingestion time is when it was added, never an older time of its
 * own (an object another tool put in the bucket, indexed by a later `reindex`; an upload confirmed late), so a
 * client that asks for what was ingested since its last look never misses it. Only the objects present when an
 * index is first built, and objects written in the last few minutes, keep their own times.
 */
export function addedNow(object: StoredObject, now = Date.now()): StoredObject {
  // An object written moments ago (an upload through this server, a prompt confirmation) keeps its own time, so
  // the index rebuilt from the store after a restart gives the same answers; a client asking "since" looks a
  // day back (ingestion dates are days), far more than this.
  return now - object.mtimeMs <= RECENT_OBJECT_MS ? object : { ...object, mtimeMs: now };
}

/** How old an object's own time may be and still stand as its ingestion time when it is added. */
const RECENT_OBJECT_MS = 10 * 60 * 1000;

/** `YYYY-MM-DD HH:MM:SS` in UTC. */
export function formatIngestionDate(mtimeMs: number): string {
  return new Date(mtimeMs).toISOString().slice(0, 19).replace('T', ' ');
}

/** The record an object is listed as. */
export function recordOf(object: StoredObject): MetadataRecord {
  const { file } = object;
  const ingestion_date = formatIngestionDate(object.mtimeMs);
  return file.kind === 'science'
    ? {
        file_path: file.path,
        instrument: file.instrument,
        data_level: file.dataLevel,
        descriptor: file.descriptor,
        start_date: file.startDate,
        end_date: file.endDate,
        version: file.version,
        extension: file.extension,
        ingestion_date,
      }
    : {
        file_path: file.path,
        instrument: file.instrument,
        descriptor: file.descriptor,
        start_date: file.startDate,
        end_date: file.endDate ?? null,
        version: file.version,
        extension: file.extension,
        ingestion_date,
      };
}
