/**
 * The zod schemas of query records, by kind: what words a record's refusal (the check of `records.ts` tells a
 * record that fits without them). Loaded with the first query (`recordSchemas`), not with the library.
 */
import * as z from '../core/zod.js';

/** A whole number or null, where today's records carry one (`repointing`, `cr`, the version's parts). */
const wholeOrNull = z.optional(z.nullable(z.int()));

/** The fields every file record carries, before and after its `data_level` (the order zod reports them in). */
const namingFields = { file_path: z.string(), instrument: z.string() };
const productFields = {
  descriptor: z.string(),
  start_date: z.string(),
  end_date: z.optional(z.nullable(z.string())),
  version: z.string(),
  extension: z.string(),
  ingestion_date: z.optional(z.string()),
};

/** The zod schema of a record of the specification's names, or of today's ancillary files; extra fields pass. */
const queryRecordSchema = z.looseObject({
  ...namingFields,
  data_level: z.optional(z.string()),
  ...productFields,
});

/** Today's science record (ARCHIVE-TODAY §3): one date, the suffix's numbers and the version's parts. */
const todayProductSchema = z.looseObject({
  ...namingFields,
  data_level: z.string(),
  ...productFields,
  repointing: wholeOrNull,
  cr: wholeOrNull,
  major_version: wholeOrNull,
  minor_version: wholeOrNull,
});

/** A `/spice-query` record: the kernel's name and type, its coverage (null for no date) and its version. */
const spiceRecordSchema = z.looseObject({
  file_path: z.optional(z.string()),
  file_name: z.string(),
  kernel_type: z.string(),
  min_date_datetime: z.nullable(z.string()),
  max_date_datetime: z.nullable(z.string()),
  ingestion_date: z.optional(z.string()),
  version: z.union([z.string(), z.int()]),
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

const SCHEMAS = {
  spec: queryRecordSchema,
  today: todayProductSchema,
  spice: spiceRecordSchema,
  newer: newerFormRecordSchema,
} as const;

/** The kinds of record a query answer holds, each checked against its schema. */
export type RecordKind = keyof typeof SCHEMAS;

/** What the check of a record asks of the schemas. */
export interface RecordSchemas {
  /** Why `item` is not a record of `kind`: the first field that is wrong, or undefined when it is one. */
  problem(kind: RecordKind, item: unknown): { field: string; message: string } | undefined;
}

export const schemas: RecordSchemas = {
  problem(kind, item) {
    const result = z.safeParse(SCHEMAS[kind], item);
    if (result.success) return undefined;
    const issue = result.error.issues[0];
    return {
      field: issue && issue.path.length > 0 ? issue.path.join('.') : '',
      message: issue?.message ?? 'invalid',
    };
  },
};
