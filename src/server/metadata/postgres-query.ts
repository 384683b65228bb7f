/** The SQL of the PostgreSQL index: one parameterised statement per `/query`, and the rows of stored objects. */
import { recordFields } from '../../naming/grammars.js';
import { parsePath } from '../../naming/names.js';
import type { StoredObject } from '../objects/object-store.js';
import {
  factsOf,
  filterNumber,
  filterVersionRank,
  formatIngestionDate,
  type IndexQuery,
  type QueryPage,
} from './metadata-index.js';

/** A statement and its parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** The columns a record is made of. */
const RECORD_COLUMNS = 'file_path, record, ingested_ms';

/** A row of `RECORD_COLUMNS`. */
export interface RecordRow {
  file_path: string;
  /** The record's naming fields as JSON; null in rows stored before schema version 3 (made from the path). */
  record: string | null;
  ingested_ms: string;
}

/** The UTC day of a time, `YYYYMMDD` as a number. */
function dayOf(ms: number): number {
  return Number(new Date(ms).toISOString().slice(0, 10).replaceAll('-', ''));
}

/** Adds the conditions of `filters` on a file's name (not its state or ingestion) to `where`, with `values`. */
function namingConditions(filters: IndexQuery, where: string[], values: unknown[]): void {
  const add = (condition: string, value: unknown) => {
    values.push(value);
    where.push(condition.replaceAll('?', `$${values.length}`));
  };
  add('table_name = ?', filters.table);
  if (filters.file_path !== undefined) add('file_path = ?', filters.file_path);
  if (filters.instrument !== undefined) add('instrument = ?', filters.instrument);
  if (filters.data_level !== undefined) add('data_level = ?', filters.data_level);
  if (filters.descriptor !== undefined) add('descriptor = ?', filters.descriptor);
  if (filters.type !== undefined) add('kernel_type = ?', filters.type);
  if (filters.table === 'spice') {
    // A kernel is found when its coverage overlaps the range; a date its name lacks leaves that side open.
    if (filters.start_date !== undefined) add('(max_date IS NULL OR max_date >= ?)', filters.start_date);
    if (filters.end_date !== undefined) add('(min_date IS NULL OR min_date <= ?)', filters.end_date);
  } else {
    // Both date filters bound the file's start date, as the real service does.
    if (filters.start_date !== undefined) add('start_date >= ?', filters.start_date);
    if (filters.end_date !== undefined) add('start_date <= ?', filters.end_date);
  }
  if (filters.version !== undefined && filters.version !== 'latest') {
    add('version_rank = ?', filterVersionRank(filters.version, filters.table));
  }
  if (filters.extension !== undefined) add('extension = ?', filters.extension);
  if (filters.repointing !== undefined) add('repointing = ?', filterNumber(filters.repointing));
  if (filters.major_version !== undefined) add('major_version = ?', filterNumber(filters.major_version));
  if (filters.minor_version !== undefined) add('minor_version = ?', filterNumber(filters.minor_version));
}

/** The text of the `/query` statement, its parameters appended to `values`. */
function queryText(filters: IndexQuery, page: QueryPage | undefined, values: unknown[]): string {
  const where = [`state = 'stored'`];
  namingConditions(filters, where, values);
  if (filters.ingestion_start_date !== undefined) {
    values.push(Number(filters.ingestion_start_date));
    where.push(`ingestion_day >= $${values.length}`);
  }
  if (filters.ingestion_end_date !== undefined) {
    values.push(Number(filters.ingestion_end_date));
    where.push(`ingestion_day <= $${values.length}`);
  }
  const latest = filters.version === 'latest' || filters.latest === true;
  let text = latest
    ? `SELECT ${RECORD_COLUMNS} FROM (SELECT ${RECORD_COLUMNS}, version_rank, max(version_rank) OVER (PARTITION BY series) AS top FROM files WHERE ${where.join(' AND ')}) AS ranked WHERE version_rank = top`
    : `SELECT ${RECORD_COLUMNS} FROM files WHERE ${where.join(' AND ')}`;
  text += ' ORDER BY file_path';
  if (page?.limit !== undefined) {
    values.push(page.limit);
    text += ` LIMIT $${values.length}`;
  }
  if (page && page.offset > 0) {
    values.push(page.offset);
    text += ` OFFSET $${values.length}`;
  }
  return text;
}

/**
 * The `/query` statement: every filter given (AND) on stored rows of the table, `latest` as the highest version
 * per series among those, ordered by path, one page when asked.
 */
export function queryStatement(filters: IndexQuery, page?: QueryPage): Statement {
  const values: unknown[] = [];
  return { text: queryText(filters, page, values), values };
}

/** The columns of a reservation, as `RESERVATION_COLUMNS` of the index names them. */
const PENDING_COLUMNS = 'token, url_expires_at, release_at, content_md5, reserved_at';

/**
 * The `/query` statement and, in the same statement (so of the same moment), the reservations whose objects it
 * could select once confirmed: rows with `pending` false are the records, in order, one page when asked; rows with
 * `pending` true are reservations (`file_path` and `PENDING_COLUMNS`). Reservations are matched on the name's
 * filters only: their ingestion day and rank among versions are known once they are stored.
 */
export function queryWithPendingStatement(filters: IndexQuery, page?: QueryPage): Statement {
  const values: unknown[] = [];
  const records = queryText(filters, page, values);
  const where = [`state = 'reserved'`];
  namingConditions(filters, where, values);
  // The first branch names the columns of the whole answer.
  const none =
    'NULL::text AS token, NULL::bigint AS url_expires_at, NULL::bigint AS release_at, NULL::bytea AS content_md5, NULL::bigint AS reserved_at';
  const text =
    `(SELECT false AS pending, ${RECORD_COLUMNS}, ${none} FROM (${records}) AS stored)` +
    ` UNION ALL (SELECT true, ${RECORD_COLUMNS}, ${PENDING_COLUMNS} FROM files WHERE ${where.join(' AND ')})`;
  return { text, values };
}

/**
 * The record of a row as JSON text, the same text the in-memory index writes: its naming fields, then
 * `ingestion_date`. A row stored before schema version 3 has no naming fields of its own: its path gives them.
 */
export function recordJson(row: RecordRow): string {
  const naming = row.record ?? JSON.stringify(recordFields(parsePath(row.file_path)));
  const ingestion = JSON.stringify(formatIngestionDate(Number(row.ingested_ms)));
  return `${naming.slice(0, -1)},"ingestion_date":${ingestion}}`;
}

/** The columns of a stored object's row, in `ROW_COLUMNS` order: the first `NAMING_COLUMN_COUNT` come from the name. */
export const ROW_COLUMNS =
  'file_path, table_name, instrument, data_level, descriptor, start_date, end_date, version, version_rank, extension, ' +
  'major_version, minor_version, repointing, cr, kernel_type, min_date, max_date, series, record, ' +
  'ingested_ms, ingestion_day, size, md5, sha256';

/** How many of `ROW_COLUMNS` a name alone fills; the rest come with the object. */
export const NAMING_COLUMN_COUNT = 19;

/** Their types, for `unnest` of one array per column. */
export const ROW_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'integer',
  'text',
  'integer',
  'integer',
  'integer',
  'integer',
  'text',
  'text',
  'text',
  'text',
  'text',
  'bigint',
  'integer',
  'bigint',
  'bytea',
  'bytea',
] as const;

/** The column values of a stored object's row. */
export function rowValues(object: StoredObject): unknown[] {
  const { file } = object;
  const facts = factsOf(file);
  return [
    file.path,
    facts.table,
    facts.instrument,
    facts.dataLevel,
    facts.descriptor,
    facts.startDate,
    facts.endDate,
    facts.version,
    facts.versionRank,
    facts.extension,
    facts.majorVersion,
    facts.minorVersion,
    facts.repointing,
    facts.cr,
    facts.kernelType,
    facts.minDate,
    facts.maxDate,
    facts.series,
    JSON.stringify(recordFields(file)),
    Math.floor(object.mtimeMs),
    dayOf(object.mtimeMs),
    object.size,
    object.md5 ?? null,
    object.sha256 ?? null,
  ];
}
