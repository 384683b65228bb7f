/** The in-memory metadata index: one record per stored object, derived from its name and mtime. */
import type { StoredObject } from '../objects/object-store.js';
import { MemoryReservations } from './memory-reservations.js';
import {
  addedNow,
  couldMatch,
  factsOf,
  filterNumber,
  filterVersionRank,
  INDEX_TABLES,
  type IndexQuery,
  type MetadataIndex,
  type MetadataRecord,
  type QueryPage,
  type QueryWithPending,
  type Reservation,
  type ReserveOptions,
  recordOf,
} from './metadata-index.js';

/**
 * A record as the index keeps it: words as small integers and dates as numbers, so a query over
 * 100,000 rows compares numbers only. A part the file's kind has not is -1 (a kernel's missing coverage dates
 * are open: -Infinity and Infinity).
 */
interface IndexedRecord {
  key: string;
  table: string;
  instrument: number;
  dataLevel: number;
  descriptor: number;
  extension: number;
  kernelType: number;
  /** `YYYYMMDD` as a number. */
  startDate: number;
  /** A kernel's coverage, `YYYYMMDD` as numbers. */
  minDate: number;
  maxDate: number;
  /** The version as one number: equality filters and `latest` compare it without parsing. */
  versionRank: number;
  majorVersion: number;
  minorVersion: number;
  repointing: number;
  cr: number;
  /** The UTC day of ingestion, `YYYYMMDD` as a number, for the whole-day ingestion filters. */
  ingestionDay: number;
  /** What `latest` groups by (`FileFacts.series`), as a word number. */
  series: number;
  /** `,` and the record's JSON, encoded once so answers are copied rather than re-serialized. */
  bytes: Buffer;
}

/** A test one filter makes of a record. */
type RowTest = (row: IndexedRecord) => boolean;

interface Table {
  all: IndexedRecord[];
  /** Keyed by instrument word number. */
  byInstrument: Map<number, IndexedRecord[]>;
}

/** Gives each distinct word a small integer. */
class Words {
  readonly #ids = new Map<string, number>();

  id(word: string): number {
    let id = this.#ids.get(word);
    if (id === undefined) {
      id = this.#ids.size;
      this.#ids.set(word, id);
    }
    return id;
  }

  /** How many words have a number. */
  get size(): number {
    return this.#ids.size;
  }

  /** The word's number; -2 (matching nothing) for a word no record has. */
  find(word: string | undefined): number | undefined {
    return word === undefined ? undefined : (this.#ids.get(word) ?? -2);
  }
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const EMPTY_ARRAY = Buffer.from('[]');

function dateNumber(date: string | undefined): number | undefined {
  return date === undefined ? undefined : Number(date);
}

/** A number of the facts, -1 for none. */
const orNone = (value: number | null) => value ?? -1;

function byKey(a: IndexedRecord, b: IndexedRecord): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function emptyTables(): Map<string, Table> {
  return new Map(INDEX_TABLES.map((name) => [name, { all: [], byInstrument: new Map() }]));
}

/** Records of every stored object, kept sorted by `file_path` per table and per instrument. */
export class MemoryIndex implements MetadataIndex {
  #byKey = new Map<string, IndexedRecord>();
  #words = new Words();
  #tables = emptyTables();
  readonly #reservations = new MemoryReservations();
  readonly location = 'memory';

  /** Builds the index of a listed store in one sort. */
  constructor(objects: readonly StoredObject[] = []) {
    this.#build(objects);
  }

  #build(objects: readonly StoredObject[]): void {
    this.#byKey = new Map();
    this.#words = new Words();
    this.#tables = emptyTables();
    for (const object of objects) {
      const record = this.#indexed(object);
      if (this.#byKey.has(record.key)) continue;
      this.#byKey.set(record.key, record);
      const table = this.#tableOf(record.table);
      table.all.push(record);
      this.#instrumentList(table, record.instrument).push(record);
    }
    for (const table of this.#tables.values()) {
      table.all.sort(byKey);
      for (const list of table.byInstrument.values()) list.sort(byKey);
    }
  }

  #tableOf(name: string): Table {
    return this.#tables.get(name) as Table;
  }

  #instrumentList(table: Table, instrument: number): IndexedRecord[] {
    let list = table.byInstrument.get(instrument);
    if (!list) {
      list = [];
      table.byInstrument.set(instrument, list);
    }
    return list;
  }

  #indexed(object: StoredObject): IndexedRecord {
    const record = recordOf(object);
    const facts = factsOf(object.file);
    const words = this.#words;
    const word = (value: string | null) => (value === null ? -1 : words.id(value));
    return {
      key: object.file.path,
      table: facts.table,
      instrument: word(facts.instrument),
      dataLevel: word(facts.dataLevel),
      descriptor: word(facts.descriptor),
      extension: word(facts.extension),
      kernelType: word(facts.kernelType),
      startDate: facts.startDate === null ? -1 : Number(facts.startDate),
      minDate: facts.minDate === null ? Number.NEGATIVE_INFINITY : Number(facts.minDate),
      maxDate: facts.maxDate === null ? Number.POSITIVE_INFINITY : Number(facts.maxDate),
      versionRank: facts.versionRank,
      majorVersion: orNone(facts.majorVersion),
      minorVersion: orNone(facts.minorVersion),
      repointing: orNone(facts.repointing),
      cr: orNone(facts.cr),
      ingestionDay: Number(record.ingestion_date.slice(0, 10).replaceAll('-', '')),
      series: words.id(facts.series),
      bytes: Buffer.from(`,${JSON.stringify(record)}`, 'utf8'),
    };
  }

  async count(): Promise<number> {
    return this.#byKey.size;
  }

  async has(key: string): Promise<boolean> {
    return this.#byKey.has(key);
  }

  async get(key: string): Promise<MetadataRecord | undefined> {
    const record = this.#byKey.get(key);
    return record && (JSON.parse(record.bytes.subarray(1).toString('utf8')) as MetadataRecord);
  }

  async add(object: StoredObject): Promise<boolean> {
    if (this.#byKey.has(object.file.path)) return false;
    const record = this.#indexed(addedNow(object));
    const table = this.#tableOf(record.table);
    this.#byKey.set(record.key, record);
    for (const list of [table.all, this.#instrumentList(table, record.instrument)]) {
      list.splice(insertionPoint(list, record.key), 0, record);
    }
    return true;
  }

  async addAll(objects: readonly StoredObject[]): Promise<number> {
    let added = 0;
    for (const object of objects) {
      if (!this.#reservations.has(object.file.path) && (await this.add(object))) added += 1;
    }
    return added;
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {}

  async reserve(key: string, options: ReserveOptions): Promise<Reservation | undefined> {
    return this.#reservations.reserve(key, this.#byKey.has(key), options);
  }

  async pending(): Promise<Reservation[]> {
    return this.#reservations.pending();
  }

  async reservation(key: string): Promise<Reservation | undefined> {
    return this.#reservations.get(key);
  }

  async state(key: string): Promise<'stored' | Reservation | undefined> {
    return this.#byKey.has(key) ? 'stored' : this.#reservations.get(key);
  }

  async claim(reservation: Reservation, leaseMs?: number): Promise<string | undefined> {
    return this.#reservations.claim(reservation, leaseMs);
  }

  async unclaim(reservation: Reservation, claim: string): Promise<void> {
    this.#reservations.unclaim(reservation, claim);
  }

  async confirm(reservation: Reservation, object: StoredObject): Promise<boolean> {
    if (!this.#reservations.holds(reservation)) return false;
    this.#reservations.release(reservation);
    return this.add(object);
  }

  async release(reservation: Reservation): Promise<void> {
    this.#reservations.release(reservation);
  }

  async rebuild(objects: readonly StoredObject[]): Promise<void> {
    this.#build(objects);
  }

  async queryWithPending(filters: IndexQuery, page?: QueryPage): Promise<QueryWithPending> {
    // One process holds both, so both are of the same moment.
    const pending = this.#reservations
      .pending()
      .filter((reservation) => couldMatch(reservation.key, filters));
    return { chunks: await this.queryChunks(filters, page), pending };
  }

  /** One pre-encoded chunk per record, so a 20 MB answer costs one copy, not a serialization. */
  async queryChunks(filters: IndexQuery, page?: QueryPage): Promise<Buffer[]> {
    let rows = this.#query(filters);
    // The order is by file_path and stable, so consecutive pages concatenate to the unpaged answer.
    if (page) rows = rows.slice(page.offset, page.limit === undefined ? undefined : page.offset + page.limit);
    if (rows.length === 0) return [EMPTY_ARRAY];
    const chunks: Buffer[] = new Array(rows.length + 2);
    chunks[0] = OPEN;
    for (let i = 0; i < rows.length; i += 1) {
      const bytes = (rows[i] as IndexedRecord).bytes;
      chunks[i + 1] = i === 0 ? bytes.subarray(1) : bytes;
    }
    chunks[rows.length + 1] = CLOSE;
    return chunks;
  }

  #query(filters: IndexQuery): IndexedRecord[] {
    const table = this.#tableOf(filters.table);
    let candidates: readonly IndexedRecord[];
    if (filters.file_path !== undefined) {
      const one = this.#byKey.get(filters.file_path);
      candidates = one && one.table === filters.table ? [one] : [];
    } else if (filters.instrument !== undefined) {
      candidates = table.byInstrument.get(this.#words.find(filters.instrument) ?? -2) ?? [];
    } else {
      candidates = table.all;
    }
    const tests = rowTests(filters, this.#words);
    const rows = candidates.filter((row) => tests.every((test) => test(row)));
    if (filters.version !== 'latest' && filters.latest !== true) return rows;
    // Series are word numbers, so the highest version per series fits a typed array indexed by them.
    const highest = new Int32Array(this.#words.size).fill(-1);
    for (const row of rows) {
      if (row.versionRank > (highest[row.series] as number)) highest[row.series] = row.versionRank;
    }
    return rows.filter((row) => row.versionRank === highest[row.series]);
  }
}

/** The tests of every filter given (AND), each comparing numbers only. */
function rowTests(filters: IndexQuery, words: Words): RowTest[] {
  const tests: RowTest[] = [];
  const equal = (asked: number | undefined, field: (row: IndexedRecord) => number) => {
    if (asked !== undefined) tests.push((row) => field(row) === asked);
  };
  equal(words.find(filters.instrument), (row) => row.instrument);
  equal(words.find(filters.data_level), (row) => row.dataLevel);
  equal(words.find(filters.descriptor), (row) => row.descriptor);
  equal(words.find(filters.extension), (row) => row.extension);
  equal(words.find(filters.type), (row) => row.kernelType);
  equal(filterNumber(filters.repointing), (row) => row.repointing);
  equal(filterNumber(filters.major_version), (row) => row.majorVersion);
  equal(filterNumber(filters.minor_version), (row) => row.minorVersion);
  if (filters.version !== undefined && filters.version !== 'latest') {
    equal(filterVersionRank(filters.version, filters.table), (row) => row.versionRank);
  }
  const from = dateNumber(filters.start_date);
  const to = dateNumber(filters.end_date);
  if (filters.table === 'spice') {
    // A kernel is found when its coverage overlaps the range; a date its name lacks leaves that side open.
    if (from !== undefined) tests.push((row) => row.maxDate >= from);
    if (to !== undefined) tests.push((row) => row.minDate <= to);
  } else {
    // Both date filters bound the file's start date, as the real service does.
    if (from !== undefined) tests.push((row) => row.startDate >= from);
    if (to !== undefined) tests.push((row) => row.startDate <= to);
  }
  const ingestedFrom = dateNumber(filters.ingestion_start_date);
  const ingestedTo = dateNumber(filters.ingestion_end_date);
  if (ingestedFrom !== undefined) tests.push((row) => row.ingestionDay >= ingestedFrom);
  if (ingestedTo !== undefined) tests.push((row) => row.ingestionDay <= ingestedTo);
  return tests;
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
