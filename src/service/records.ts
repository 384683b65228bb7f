/**
 * Query records: the shape of one element of a `GET /query` or `GET /spice-query` answer, and the checks every
 * record passes. A record whose storage path is of a known naming form (either generation, any kind) is checked
 * against that kind's record; one of a form newer still is kept with whatever text fields it has.
 */
import { ProtocolError, ValidationError } from '../core/errors.js';
import { snippet } from '../core/text.js';
import { JsonArrayText } from '../http/json-array.js';
import { tableOf } from '../naming/grammars.js';
import { type LocatedFile, locateFile } from '../naming/layout.js';
import { parseName } from '../naming/names.js';
import { unsafePathReason } from '../naming/path-safety.js';
import type { QueryRecord, SpiceRecord } from '../naming/query-records.js';
import type { QueryTable } from '../naming/query-vocabulary.js';
import type { RecordKind, RecordSchemas } from './record-schemas.js';
import { fitsShape } from './record-shape.js';

/**
 * A record whose `file_path` follows a naming form this version does not check (a newer service's): kept as
 * received, with whichever of the usual fields it has.
 */
export type NewerFormRecord = { file_path: string } & {
  [Field in Exclude<keyof QueryRecord, 'file_path'>]?: QueryRecord[Field] | null | undefined;
};

/** A record of a query answer: a checked `QueryRecord` or `SpiceRecord`, or a record of a newer naming form. */
export type ReceivedRecord = QueryRecord | SpiceRecord | NewerFormRecord;

/** True when a record is a SPICE kernel's (`/spice-query`). */
export function isSpiceRecord(record: ReceivedRecord): record is SpiceRecord {
  return 'kernel_type' in record && 'file_name' in record;
}

/** Records of a query answer, each with the file its storage path names. */
export interface QueryPage {
  /** The records as received (a SPICE record without `file_path` given the one its name spells). */
  records: ReceivedRecord[];
  /**
   * The file each record's storage path names, read by the check (`unchecked` for a newer form's), at the
   * record's index: the callers that want the files take them from here rather than read every path again.
   */
  files: LocatedFile[];
}

/** A checked query answer. */
export interface CheckedAnswer extends QueryPage {
  /** How many of them use a naming form this version does not check. */
  newerForms: number;
}

/**
 * Checks a query answer's body and returns its records as received, counting those whose name is of a form this
 * version does not check. Throws a `ProtocolError` naming `source` (method and URL) when the body is not a list
 * of records, when a record's `file_path` is unsafe (safety is not a naming rule: it holds for every form), is a
 * name of a known form in the wrong folders or of a kind the `table` searched does not list, or when a record
 * lacks a field its kind's records carry: downloads later rely on every `file_path` a query returns.
 * `firstIndex` numbers the records of a later page after those of the pages before it.
 */
export function checkQueryAnswer(
  body: unknown,
  source: string,
  schemas: RecordSchemas,
  firstIndex = 0,
  table?: QueryTable,
): CheckedAnswer {
  // Every record is kept: an answer kept as text is parsed at once, its records built where they will stay.
  const records = body instanceof JsonArrayText ? parsedJson(source, () => body.parseWhole()) : body;
  const [whole] = checkQueryParts(records, source, schemas, firstIndex, table);
  return whole as CheckedAnswer;
}

/** What `parse` returns; a `SyntaxError` it throws is refused as a `ProtocolError`, in `JSON.parse`'s words. */
function parsedJson<Parsed>(source: string, parse: () => Parsed): Parsed {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new ProtocolError(`${source}: the answer is not valid JSON: ${error.message}.`);
  }
}

/**
 * The checks of `checkQueryAnswer`, a part of the answer at a time: an array answer is one part, an answer kept
 * as text (`JsonArrayText`) a part for each run of records parsed together. A part is checked when it is taken,
 * so a refused record (or text that is not JSON) throws after the parts before it were handed over.
 */
export function checkQueryParts(
  body: unknown,
  source: string,
  schemas: RecordSchemas,
  firstIndex = 0,
  table?: QueryTable,
): Iterable<CheckedAnswer> {
  if (Array.isArray(body)) return [checkRecords(body, { source, number: firstIndex + 1, schemas }, table)];
  if (!(body instanceof JsonArrayText)) {
    // Text that starts as JSON does (a gateway's words or an HTML page do not) is refused as not JSON when it is not.
    if (typeof body === 'string' && /^\s*[[{]/.test(body)) parsedJson(source, () => JSON.parse(body));
    throw new ProtocolError(`${source}: expected a JSON array of file records, got ${describeValue(body)}.`);
  }
  return checkedRuns(body, { source, number: firstIndex + 1, schemas }, table);
}

/** The runs of an answer kept as text, each checked as it is taken. */
function* checkedRuns(
  body: JsonArrayText,
  first: RecordPlace,
  table: QueryTable | undefined,
): Generator<CheckedAnswer, void, undefined> {
  let number = first.number;
  for (const run of parsedRuns(body, first.source, number)) {
    yield checkRecords(run, { ...first, number }, table);
    number += run.length;
  }
}

/** The runs of an answer kept as text, text that is not JSON refused as a `ProtocolError` naming the records. */
function* parsedRuns(body: JsonArrayText, source: string, firstNumber: number): Generator<unknown[]> {
  const runs = body.runs();
  let number = firstNumber;
  for (;;) {
    let next: IteratorResult<unknown[], void>;
    try {
      next = runs.next();
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ProtocolError(
        `${source}: the answer is not valid JSON after record ${number - 1}: ${error.message}.`,
      );
    }
    if (next.done) return;
    yield next.value;
    number += next.value.length;
  }
}

/** The number of records of an answer's body (0 for a body that is no list: its check says what it is). */
export function answerLength(body: unknown): number {
  return Array.isArray(body) || body instanceof JsonArrayText ? body.length : 0;
}

/**
 * The storage paths (or, for a SPICE record without one, names) of an answer's first and last records, as
 * received, to tell a page sent twice; undefined for an empty answer or one that is no list.
 */
export function answerBounds(body: unknown, source: string): { first: string; last: string } | undefined {
  const length = answerLength(body);
  if (length === 0) return undefined;
  const element = (index: number): unknown => {
    if (Array.isArray(body)) return body[index];
    try {
      return (body as JsonArrayText).at(index);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ProtocolError(
        `${source}: the answer is not valid JSON at record ${index + 1}: ${error.message}.`,
      );
    }
  };
  return { first: pathOfItem(element(0)), last: pathOfItem(element(length - 1)) };
}

/** A received record's `file_path`, or its `file_name`; empty when it has neither as text. */
function pathOfItem(item: unknown): string {
  if (typeof item !== 'object' || item === null) return '';
  const { file_path: path, file_name: name } = item as Record<string, unknown>;
  return typeof path === 'string' ? path : typeof name === 'string' ? name : '';
}

/** The records of one part checked, `first.number` the first one's number in the whole answer. */
function checkRecords(
  items: readonly unknown[],
  first: RecordPlace,
  table: QueryTable | undefined,
): CheckedAnswer {
  let newerForms = 0;
  const records: ReceivedRecord[] = new Array(items.length);
  const files: LocatedFile[] = new Array(items.length);
  items.forEach((item: unknown, index) => {
    const where: RecordPlace = { ...first, number: first.number + index };
    const checked = table === 'spice' ? checkSpiceRecord(item, where) : checkFileRecord(item, where, table);
    if (checked.file.kind === 'unchecked') newerForms += 1;
    records[index] = checked.record;
    files[index] = checked.file;
  });
  return { records, files, newerForms };
}

/** Where a record is, for messages: the request and the record's number in the whole answer; the schemas. */
interface RecordPlace {
  source: string;
  number: number;
  schemas: RecordSchemas;
}

/** One checked record, and the file its storage path names (`unchecked`: a form newer than this version's). */
interface CheckedRecord {
  record: ReceivedRecord;
  file: LocatedFile;
}

/** A `/query` record: its path located, its kind that of the table asked, its fields those of its kind. */
function checkFileRecord(item: unknown, where: RecordPlace, table: QueryTable | undefined): CheckedRecord {
  const path = filePathOf(item, where.number, where.source);
  const file = locatedPath(path, 'file_path', where);
  const newer = file.kind === 'unchecked';
  if (!newer && table !== undefined && tableOf(file) !== table) {
    throw refusal(
      where,
      `its file_path ${JSON.stringify(path)} is ${kindPhrase(file.kind)} file, not one the ${table} table lists`,
    );
  }
  const kind: RecordKind = newer
    ? 'newer'
    : file.generation === 'today' && file.kind !== 'ancillary' && file.kind !== 'release'
      ? 'today'
      : 'spec';
  checkShape(kind, item, where);
  return { record: item as ReceivedRecord, file };
}

/**
 * A `/spice-query` record: its fields checked, its `file_name` a SPICE kernel's name (or, with a `file_path` of
 * a newer form, kept as one), and its `file_path` that name's storage path, rebuilt from the name when absent.
 */
function checkSpiceRecord(item: unknown, where: RecordPlace): CheckedRecord {
  checkShape('spice', item, where);
  const record = item as Omit<SpiceRecord, 'file_path'> & { file_path?: string | undefined };
  const name = record.file_name;
  if (name.includes('/') || unsafePathReason(name)) {
    throw refusal(where, `its file_name ${JSON.stringify(name)} is not a bare file name`);
  }
  if (record.file_path !== undefined) {
    const file = locatedPath(record.file_path, 'file_path', where);
    if (file.kind !== 'unchecked' && file.kind !== 'spice') {
      throw refusal(
        where,
        `its file_path ${JSON.stringify(record.file_path)} is ${kindPhrase(file.kind)} file, not a SPICE kernel`,
      );
    }
    if (file.name !== name) {
      throw refusal(
        where,
        `its file_path ${JSON.stringify(record.file_path)} does not end in its file_name ${JSON.stringify(name)}`,
      );
    }
    return { record: record as SpiceRecord, file };
  }
  const file = locatedPath(name, 'file_name', where);
  if (file.kind !== 'spice') {
    throw refusal(
      where,
      `its file_name ${JSON.stringify(name)} is ${kindPhrase(file.kind)} file, not a SPICE kernel`,
    );
  }
  return { record: { ...record, file_path: file.path }, file };
}

/**
 * A record's `file_path` (or, for `file_name`, a bare name) located by the naming rules; a `ProtocolError` saying
 * why it cannot be.
 */
function locatedPath(value: string, field: 'file_path' | 'file_name', where: RecordPlace): LocatedFile {
  const unsafe = unsafePathReason(value);
  if (unsafe) throw refusal(where, `its ${field} ${JSON.stringify(value)} is unsafe (${unsafe})`);
  try {
    return field === 'file_path' ? locateFile(value) : parseName(value);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const what = field === 'file_path' ? 'a valid storage path' : 'a file name this version reads';
    throw refusal(
      where,
      `its ${field} ${JSON.stringify(value)} is not ${what} (${error.problems.join(' ')})`,
    );
  }
}

/** A kind with its article: `a science`, `an ancillary`. */
function kindPhrase(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** The `ProtocolError` refusing a record, and with it the whole answer. */
function refusal(where: RecordPlace, why: string): ProtocolError {
  return new ProtocolError(`${where.source}: refusing record ${where.number}: ${why}.`);
}

/** Checks a record against its kind's schema; a `ProtocolError` naming the first field that is wrong. */
function checkShape(kind: RecordKind, item: unknown, where: RecordPlace): void {
  if (fitsShape(kind, item)) return;
  const problem = where.schemas.problem(kind, item);
  if (problem === undefined) return;
  const field = problem.field !== '' ? `field ${problem.field}: ` : '';
  throw new ProtocolError(
    `${where.source}: record ${where.number} is not a file record (${field}${problem.message}).`,
  );
}

/** The `file_path` of a record, or the `ProtocolError` of an element that is no record. */
function filePathOf(item: unknown, number: number, source: string): string {
  const path =
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? (item as Record<string, unknown>).file_path
      : undefined;
  if (typeof path === 'string') return path;
  const problem =
    typeof item !== 'object' || item === null || Array.isArray(item)
      ? `expected object, received ${describeValue(item)}`
      : path === undefined
        ? 'field file_path: missing'
        : `field file_path: expected string, received ${describeValue(path)}`;
  throw new ProtocolError(`${source}: record ${number} is not a file record (${problem}).`);
}

/**
 * Checks a query answer's body and returns its records exactly as received (see `checkQueryAnswer`; records of
 * newer naming forms are kept).
 */
export function checkQueryRecords(
  body: unknown,
  source: string,
  schemas: RecordSchemas,
  table?: QueryTable,
): ReceivedRecord[] {
  return checkQueryAnswer(body, source, schemas, 0, table).records;
}

/** A short description of an unexpected JSON value, for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value) || value instanceof JsonArrayText) return `an array of ${value.length}`;
  if (typeof value === 'string') return `the text ${JSON.stringify(snippet(value))}`;
  if (typeof value === 'object')
    return `an object with keys ${Object.keys(value).slice(0, 8).join(', ') || '(none)'}`;
  return `${typeof value} ${String(value)}`;
}
