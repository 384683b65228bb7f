/**
 * The seam between the routes and the records of stored files. The routes see only this interface; the
 * in-memory index (`memory-index.ts`) is one implementation. Every method is asynchronous, so an index kept in
 * a database fits the same routes.
 */

import type { MissionFile } from '../../naming/file-types.js';
import { isProductFile } from '../../naming/file-types.js';
import { type RecordFields, recordFields, TODAY_GRAMMARS, tableOf } from '../../naming/grammars.js';
import { parsePath } from '../../naming/names.js';
import type { QueryParameter, QueryTable } from '../../naming/query-vocabulary.js';
import { spiceSeries } from '../../naming/spice.js';
import { parseVersion, versionRank } from '../../naming/versions.js';
import type { StoredObject } from '../objects/object-store.js';

/**
 * A checked query, by the service's parameter names (the library's `IndexQuery` name them for callers);
 * every filter given must match (AND). On the `spice` table (`/spice-query`, its ingestion dates under these
 * names) `type` is the kernel type and `start_date`/`end_date` match kernels whose coverage overlaps the range;
 * on the others both dates bound the file's start date. `repointing`, `major_version` and `minor_version` are
 * whole numbers.
 */
export interface IndexQuery extends Partial<Record<Exclude<QueryParameter, 'table'>, string>> {
  table: QueryTable;
  /** Keep only the highest version per series (`FileFacts.series`) among the rows that pass the other filters. */
  latest?: boolean;
}

/** Which slice of the ordered answer to return: `limit` records (all when undefined) after the first `offset`. */
export interface QueryPage {
  offset: number;
  limit?: number | undefined;
}

/**
 * The record of a stored file (the one the client reads): its naming fields as its kind and generation list
 * them (`recordFields`), and `ingestion_date`, when the object was stored.
 */
export type MetadataRecord = RecordFields & { file_path: string; ingestion_date: string };

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

/** The tables of the index: one per kind of file (only science, ancillary and spice are queried). */
export const INDEX_TABLES: readonly string[] = TODAY_GRAMMARS.map((grammar) => grammar.table);

/**
 * What the index knows of a file besides its record: the values its filters and `latest` compare, each null
 * where the file's kind has no such part.
 */
export interface FileFacts {
  /** The table that lists the file (`tableOf`). */
  table: string;
  instrument: string | null;
  dataLevel: string | null;
  descriptor: string | null;
  /** `YYYYMMDD`: the first date of a name that has one; null for SPICE kernels (see `minDate`). */
  startDate: string | null;
  /** The specification's second date, an ancillary file's or a release manifest's; null otherwise. */
  endDate: string | null;
  extension: string;
  version: string;
  /** One integer ordering every version form (`versionRank`); a kernel's digits as their number. */
  versionRank: number;
  /** Today's major version; null for a minor-only `vNNN`, the specification's versions and kernels. */
  majorVersion: number | null;
  /** Today's minor version; null for the specification's versions and kernels. */
  minorVersion: number | null;
  repointing: number | null;
  cr: number | null;
  kernelType: string | null;
  /** A kernel's coverage, `YYYYMMDD`; null where its name carries no date (then it is open on that side). */
  minDate: string | null;
  maxDate: string | null;
  /**
   * What `latest` keeps one record of: a product's instrument, level, descriptor, start date and repointing or
   * Carrington rotation (so a `vXX-YY` and today's versions of one product are one series); a dated file's
   * instrument, descriptor and start date; a kernel's `spiceSeries`.
   */
  series: string;
}

/** The facts of a file of any kind. */
export function factsOf(file: MissionFile): FileFacts {
  const parsed =
    file.generation === 'today' && file.kind !== 'spice' ? parseVersion(file.version) : undefined;
  const facts: FileFacts = {
    table: tableOf(file),
    instrument: null,
    dataLevel: null,
    descriptor: null,
    startDate: null,
    endDate: null,
    extension: file.extension,
    version: file.version,
    versionRank: versionRank(file.version),
    majorVersion: parsed?.major ?? null,
    minorVersion: parsed?.minor ?? null,
    repointing: null,
    cr: null,
    kernelType: null,
    minDate: null,
    maxDate: null,
    series: '',
  };
  if (file.kind === 'spice') {
    return {
      ...facts,
      kernelType: file.kernelType,
      minDate: file.startDate ?? null,
      maxDate: file.endDate ?? null,
      series: spiceSeries(file),
    };
  }
  const dataLevel = isProductFile(file) ? file.dataLevel : null;
  const repointing = isProductFile(file) ? (file.repointing ?? null) : null;
  const cr = isProductFile(file) ? (file.cr ?? null) : null;
  const suffix = repointing !== null ? `repoint${repointing}` : cr !== null ? `cr${cr}` : '';
  return {
    ...facts,
    instrument: file.instrument,
    dataLevel,
    descriptor: file.descriptor,
    startDate: file.startDate,
    endDate: file.endDate ?? null,
    repointing,
    cr,
    // The form the schema-3 migration gives the rows it found (PostgreSQL builds it from their columns).
    series: `${file.instrument}/${dataLevel ?? ''}/${file.descriptor}/${file.startDate}/${suffix}`,
  };
}

/** The rank a `version` filter asks for: a kernel's version is its digits (`0012`, `v100`), compared as numbers. */
export function filterVersionRank(value: string, table: string): number {
  return versionRank(table === 'spice' ? value.replace(/^v/, '') : value);
}

/** A whole-number filter (`repointing`, `major_version`, `minor_version`) as a number; `repoint00042` is 42. */
export function filterNumber(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value.replace(/^repoint/, ''));
}

/** True when `value` is not asked for, or equals `actual`. */
function agrees<T>(asked: T | undefined, actual: T | null): boolean {
  return asked === undefined || asked === actual;
}

/**
 * True when the file `key` names could be among the answers to `filters`: every filter on the name is
 * checked; ingestion dates and `latest` are not (an upload is ingested when confirmed, and may be the latest),
 * so those keep it in. A kernel's dates are matched as the index matches them: its coverage overlaps the range.
 */
export function couldMatch(key: string, filters: IndexQuery): boolean {
  let facts: FileFacts;
  try {
    facts = factsOf(parsePath(key));
  } catch {
    return false;
  }
  if (facts.table !== filters.table) return false;
  const version = filters.version === 'latest' ? undefined : filters.version;
  const { start_date: from, end_date: to } = filters;
  const dates =
    filters.table === 'spice'
      ? (from === undefined || facts.maxDate === null || facts.maxDate >= from) &&
        (to === undefined || facts.minDate === null || facts.minDate <= to)
      : (from === undefined || (facts.startDate ?? '') >= from) &&
        (to === undefined || (facts.startDate ?? '') <= to);
  return (
    dates &&
    agrees(filters.file_path, key) &&
    agrees(filters.instrument, facts.instrument) &&
    agrees(filters.data_level, facts.dataLevel) &&
    agrees(filters.descriptor, facts.descriptor) &&
    agrees(filters.extension, facts.extension) &&
    agrees(filters.type, facts.kernelType) &&
    agrees(filterNumber(filters.repointing), facts.repointing) &&
    agrees(filterNumber(filters.major_version), facts.majorVersion) &&
    agrees(filterNumber(filters.minor_version), facts.minorVersion) &&
    (version === undefined || filterVersionRank(version, filters.table) === facts.versionRank)
  );
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

/**
 * The record an object is listed as: the naming fields its kind and generation list (`recordFields`: today's
 * science records carry `repointing`, `cr`, `major_version` and `minor_version` and no `end_date`; a kernel's
 * carry `file_name`, `kernel_type` and its coverage), then `ingestion_date`.
 */
export function recordOf(object: StoredObject): MetadataRecord {
  return {
    ...recordFields(object.file),
    file_path: object.file.path,
    ingestion_date: formatIngestionDate(object.mtimeMs),
  };
}
