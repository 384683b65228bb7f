/** Query records: the shape of one element of a `GET /query` answer, and the checks every record passes. */
import { ProtocolError, ValidationError } from '../core/errors.js';
import { snippet } from '../core/text.js';
import * as z from '../core/zod.js';
import { locateFile } from '../naming/layout.js';
import { unsafePathReason } from '../naming/path-safety.js';
import type { QueryRecord } from '../naming/query-vocabulary.js';

/** The zod schema of one query record; extra fields pass through untouched. */
const queryRecordSchema = z.looseObject({
  file_path: z.string(),
  instrument: z.string(),
  data_level: z.optional(z.string()),
  descriptor: z.string(),
  start_date: z.string(),
  end_date: z.optional(z.nullable(z.string())),
  version: z.string(),
  extension: z.string(),
  ingestion_date: z.optional(z.string()),
});

/**
 * The schema of a record whose name is of a form this version does not check: only `file_path` is sure; the
 * other fields, when present, are text (or null), so they can still be shown.
 */
const newerFormRecordSchema = z.looseObject({
  file_path: z.string(),
  instrument: z.optional(z.nullable(z.string())),
  data_level: z.optional(z.nullable(z.string())),
  descriptor: z.optional(z.nullable(z.string())),
  start_date: z.optional(z.nullable(z.string())),
  end_date: z.optional(z.nullable(z.string())),
  version: z.optional(z.nullable(z.string())),
  extension: z.optional(z.nullable(z.string())),
  ingestion_date: z.optional(z.nullable(z.string())),
});

/**
 * A record whose `file_path` follows a naming form this version does not check (a newer service's): kept as
 * received, with whichever of the usual fields it has.
 */
export type NewerFormRecord = { file_path: string } & {
  [Field in Exclude<keyof QueryRecord, 'file_path'>]?: QueryRecord[Field] | null | undefined;
};

/** A record of a query answer: a checked `QueryRecord`, or a record of a newer naming form. */
export type ReceivedRecord = QueryRecord | NewerFormRecord;

/** A checked query answer. */
export interface CheckedAnswer {
  /** The records exactly as received. */
  records: ReceivedRecord[];
  /** How many of them use a naming form this version does not check. */
  newerForms: number;
}

/**
 * Checks a query answer's body and returns its records exactly as received, counting those whose name is of a
 * form this version does not check. Throws a `ProtocolError` naming `source` (method and URL) when the body is
 * not a list of records, or when a record's `file_path` is unsafe (safety is not a naming rule: it holds for
 * every form) or is a name of a known form in the wrong folders: downloads later rely on every `file_path` a
 * query returns. `firstIndex` numbers the records of a later page after those of the pages before it.
 */
export function checkQueryAnswer(body: unknown, source: string, firstIndex = 0): CheckedAnswer {
  if (!Array.isArray(body)) {
    throw new ProtocolError(`${source}: expected a JSON array of file records, got ${describeValue(body)}.`);
  }
  let newerForms = 0;
  body.forEach((item: unknown, index) => {
    const number = firstIndex + index + 1;
    const path = filePathOf(item, number, source);
    const unsafe = unsafePathReason(path);
    if (unsafe) {
      throw new ProtocolError(
        `${source}: refusing record ${number}: its file_path ${JSON.stringify(path)} is unsafe (${unsafe}).`,
      );
    }
    let kind: string;
    try {
      kind = locateFile(path).kind;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ProtocolError(
        `${source}: refusing record ${number}: its file_path ${JSON.stringify(path)} is not a valid storage path (${error.problems.join(' ')})`,
      );
    }
    const newer = kind === 'unchecked';
    if (newer) newerForms += 1;
    const result = (newer ? newerFormRecordSchema : queryRecordSchema).safeParse(item);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `field ${issue.path.join('.')}: ` : '';
      throw new ProtocolError(
        `${source}: record ${number} is not a file record (${where}${issue?.message ?? 'invalid'}).`,
      );
    }
  });
  return { records: body as ReceivedRecord[], newerForms };
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
export function checkQueryRecords(body: unknown, source: string): ReceivedRecord[] {
  return checkQueryAnswer(body, source).records;
}

/** A short description of an unexpected JSON value, for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return `the text ${JSON.stringify(snippet(value))}`;
  if (typeof value === 'object')
    return `an object with keys ${Object.keys(value).slice(0, 8).join(', ') || '(none)'}`;
  return `${typeof value} ${String(value)}`;
}
