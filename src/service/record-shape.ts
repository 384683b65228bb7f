/**
 * The shape of a file record told without zod: each field of each kind's records (the specification's, today's)
 * and what it may be. Most records fit, and are never copied by a parse; the schemas word what does not.
 */
import type { RecordKind } from './record-schemas.js';

/**
 * What each field of a file record may be, as the record schemas say it, for `fitsShape`: a string, or a string or
 * whole number, each perhaps absent (`?`) or null.
 */
type FieldRule = 'string' | 'string?' | 'string|null?' | 'int|null?';

const FIELD_RULES = new Map<RecordKind, ReadonlyArray<readonly [string, FieldRule]>>([
  [
    'spec',
    [
      ['file_path', 'string'],
      ['instrument', 'string'],
      ['data_level', 'string?'],
      ['descriptor', 'string'],
      ['start_date', 'string'],
      ['end_date', 'string|null?'],
      ['version', 'string'],
      ['extension', 'string'],
      ['ingestion_date', 'string?'],
    ],
  ],
  [
    'today',
    [
      ['file_path', 'string'],
      ['instrument', 'string'],
      ['data_level', 'string'],
      ['descriptor', 'string'],
      ['start_date', 'string'],
      ['end_date', 'string|null?'],
      ['version', 'string'],
      ['extension', 'string'],
      ['ingestion_date', 'string?'],
      ['repointing', 'int|null?'],
      ['cr', 'int|null?'],
      ['major_version', 'int|null?'],
      ['minor_version', 'int|null?'],
    ],
  ],
]);

function fitsRule(value: unknown, rule: FieldRule): boolean {
  if (typeof value === 'string') return rule !== 'int|null?';
  if (value === undefined) return rule !== 'string';
  if (value === null) return rule === 'string|null?' || rule === 'int|null?';
  return rule === 'int|null?' && Number.isSafeInteger(value);
}

/**
 * True when `item` is a plain object whose fields are what `schema` wants, told without zod's parse, which copies
 * every record it checks (at 10,000 records a page, most of what a page cost besides its names); false says only
 * that zod must look (a schema without rules here, or a field that does not fit).
 */
export function fitsShape(kind: RecordKind, item: unknown): boolean {
  const rules = FIELD_RULES.get(kind);
  if (rules === undefined || typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const fields = item as Record<string, unknown>;
  for (const [field, rule] of rules) if (!fitsRule(fields[field], rule)) return false;
  return true;
}
