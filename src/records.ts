/** Query records: the shape of one element of a `GET /query` answer, and the checks every record passes. */
import { ProtocolError, ValidationError } from './errors.js';
import { parsePath } from './naming.js';
import { unsafePathReason } from './path-safety.js';
import type { QueryRecord } from './query-vocabulary.js';
import * as z from './zod.js';

/** The zod schema of one query record; extra fields pass through untouched. */
export const queryRecordSchema = z.looseObject({
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
 * Checks a query answer's body and returns its records exactly as received. Throws a `ProtocolError` naming
 * `source` (method and URL) when the body is not a list of records, or when a record's `file_path` is unsafe
 * or not a valid storage path: downloads later rely on every `file_path` a query returns.
 */
export function checkQueryRecords(body: unknown, source: string): QueryRecord[] {
  if (!Array.isArray(body)) {
    throw new ProtocolError(`${source}: expected a JSON array of file records, got ${describeValue(body)}.`);
  }
  body.forEach((item: unknown, index) => {
    const result = queryRecordSchema.safeParse(item);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `field ${issue.path.join('.')}: ` : '';
      throw new ProtocolError(
        `${source}: record ${index + 1} is not a file record (${where}${issue?.message ?? 'invalid'}).`,
      );
    }
    const path = result.data.file_path;
    const unsafe = unsafePathReason(path);
    if (unsafe) {
      throw new ProtocolError(
        `${source}: refusing record ${index + 1}: its file_path ${JSON.stringify(path)} is unsafe (${unsafe}).`,
      );
    }
    try {
      parsePath(path);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ProtocolError(
        `${source}: refusing record ${index + 1}: its file_path ${JSON.stringify(path)} is not a valid storage path (${error.problems.join(' ')})`,
      );
    }
  });
  return body as QueryRecord[];
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

/** The start of a long text, for messages. */
export function snippet(text: string, length = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}
