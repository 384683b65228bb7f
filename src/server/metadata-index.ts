/** The metadata index: one record per stored object, derived from its name and mtime, queried in memory. */
import type { QUERY_TABLES } from '../naming.js';
import type { StoredObject } from './object-store.js';

/** A table the query searches. */
export type QueryTable = (typeof QUERY_TABLES)[number];

/** Checked query filters; every filter given must match (AND). */
export interface QueryFilters {
  table: QueryTable;
  file_path?: string;
  instrument?: string;
  data_level?: string;
  descriptor?: string;
  start_date?: string;
  end_date?: string;
  /** A version `vXX-YY`, or `latest`. */
  version?: string;
  extension?: string;
  ingestion_start_date?: string;
  ingestion_end_date?: string;
}

/** A record as the query returns it (ancillary records have no `data_level`). */
export interface MetadataRecord {
  file_path: string;
  instrument: string;
  data_level?: string;
  descriptor: string;
  start_date: string;
  /** Null for an ancillary file whose name has a single date. */
  end_date: string | null;
  version: string;
  extension: string;
  /** `YYYY-MM-DD HH:MM:SS`, UTC: when the object was stored. */
  ingestion_date: string;
}

interface IndexedRecord {
  key: string;
  table: QueryTable;
  instrument: string;
  dataLevel: string | undefined;
  descriptor: string;
  startDate: string;
  version: string;
  /** The version as one number, so `latest` compares numerically without parsing per query. */
  versionRank: number;
  extension: string;
  /** The UTC day of ingestion, `YYYYMMDD`, for the whole-day ingestion filters. */
  ingestionDay: string;
  /** What `latest` groups by: instrument, data level, descriptor and start date. */
  series: string;
  /** The record's JSON, serialized once so answers are joined rather than re-serialized. */
  json: string;
}

interface Table {
  all: IndexedRecord[];
  byInstrument: Map<string, IndexedRecord[]>;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC. */
export function formatIngestionDate(mtimeMs: number): string {
  return new Date(mtimeMs).toISOString().slice(0, 19).replace('T', ' ');
}

function versionRank(version: string): number {
  const match = /^v(\d+)-(\d+)$/.exec(version);
  return match ? Number(match[1]) * 1_000_000 + Number(match[2]) : -1;
}

function byKey(a: IndexedRecord, b: IndexedRecord): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** The record an object is listed as. */
export function recordOf(object: StoredObject): MetadataRecord {
  const { file } = object;
  const common = { file_path: file.path, instrument: file.instrument };
  const rest = {
    descriptor: file.descriptor,
    start_date: file.startDate,
    end_date: file.endDate ?? null,
    version: file.version,
    extension: file.extension,
    ingestion_date: formatIngestionDate(object.mtimeMs),
  };
  return file.kind === 'science'
    ? { ...common, data_level: file.dataLevel, ...rest }
    : { ...common, ...rest };
}

/** Records of every stored object, kept sorted by `file_path` per table and per instrument. */
export class MetadataIndex {
  readonly #byKey = new Map<string, IndexedRecord>();
  readonly #tables: Record<QueryTable, Table> = {
    science: { all: [], byInstrument: new Map() },
    ancillary: { all: [], byInstrument: new Map() },
  };

  /** Builds the index of a scanned store in one sort. */
  constructor(objects: readonly StoredObject[] = []) {
    for (const object of objects) {
      const record = this.#indexed(object);
      if (this.#byKey.has(record.key)) continue;
      this.#byKey.set(record.key, record);
      const table = this.#tables[record.table];
      table.all.push(record);
      this.#instrumentList(table, record.instrument).push(record);
    }
    for (const table of Object.values(this.#tables)) {
      table.all.sort(byKey);
      for (const list of table.byInstrument.values()) list.sort(byKey);
    }
  }

  #instrumentList(table: Table, instrument: string): IndexedRecord[] {
    let list = table.byInstrument.get(instrument);
    if (!list) {
      list = [];
      table.byInstrument.set(instrument, list);
    }
    return list;
  }

  #indexed(object: StoredObject): IndexedRecord {
    const record = recordOf(object);
    const { file } = object;
    const dataLevel = file.kind === 'science' ? file.dataLevel : undefined;
    return {
      key: file.path,
      table: file.kind,
      instrument: file.instrument,
      dataLevel,
      descriptor: file.descriptor,
      startDate: file.startDate,
      version: file.version,
      versionRank: versionRank(file.version),
      extension: file.extension,
      ingestionDay: record.ingestion_date.slice(0, 10).replaceAll('-', ''),
      series: `${file.instrument}\u0000${dataLevel ?? ''}\u0000${file.descriptor}\u0000${file.startDate}`,
      json: JSON.stringify(record),
    };
  }

  /** Number of indexed objects. */
  get size(): number {
    return this.#byKey.size;
  }

  /** True when `key` is indexed. */
  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** Adds (or replaces) the record of a newly stored object. */
  add(object: StoredObject): void {
    const record = this.#indexed(object);
    const table = this.#tables[record.table];
    const previous = this.#byKey.get(record.key);
    this.#byKey.set(record.key, record);
    for (const list of [table.all, this.#instrumentList(table, record.instrument)]) {
      const at = insertionPoint(list, record.key);
      if (previous && list[at]?.key === record.key) list[at] = record;
      else list.splice(at, 0, record);
    }
  }

  /** The records matching every filter, ordered by `file_path`, as a JSON array. */
  queryJson(filters: QueryFilters): string {
    const rows = this.#query(filters);
    return `[${rows.map((row) => row.json).join(',')}]`;
  }

  /** The records matching every filter, ordered by `file_path`. */
  query(filters: QueryFilters): MetadataRecord[] {
    return this.#query(filters).map((row) => JSON.parse(row.json) as MetadataRecord);
  }

  #query(filters: QueryFilters): IndexedRecord[] {
    const table = this.#tables[filters.table];
    let candidates: readonly IndexedRecord[];
    if (filters.file_path !== undefined) {
      const one = this.#byKey.get(filters.file_path);
      candidates = one && one.table === filters.table ? [one] : [];
    } else if (filters.instrument !== undefined) {
      candidates = table.byInstrument.get(filters.instrument) ?? [];
    } else {
      candidates = table.all;
    }
    const { instrument, data_level, descriptor, start_date, end_date, extension } = filters;
    const { ingestion_start_date: ingestedFrom, ingestion_end_date: ingestedTo } = filters;
    const latest = filters.version === 'latest';
    const version = latest ? undefined : filters.version;
    const rows = candidates.filter(
      (row) =>
        (instrument === undefined || row.instrument === instrument) &&
        (data_level === undefined || row.dataLevel === data_level) &&
        (descriptor === undefined || row.descriptor === descriptor) &&
        // Both date filters bound the file's start date, as the real service does.
        (start_date === undefined || row.startDate >= start_date) &&
        (end_date === undefined || row.startDate <= end_date) &&
        (version === undefined || row.version === version) &&
        (extension === undefined || row.extension === extension) &&
        (ingestedFrom === undefined || row.ingestionDay >= ingestedFrom) &&
        (ingestedTo === undefined || row.ingestionDay <= ingestedTo),
    );
    if (!latest) return rows;
    const newest = new Map<string, IndexedRecord>();
    for (const row of rows) {
      const best = newest.get(row.series);
      if (!best || row.versionRank > best.versionRank) newest.set(row.series, row);
    }
    return rows.filter((row) => newest.get(row.series) === row);
  }
}

function insertionPoint(list: readonly IndexedRecord[], key: string): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((list[middle] as IndexedRecord).key < key) low = middle + 1;
    else high = middle;
  }
  return low;
}
