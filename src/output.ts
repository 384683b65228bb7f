/** Renders query records as a table, JSON or CSV: pure functions returning the text the command prints. */
import Table from 'cli-table3';
import type { QueryRecord } from './records.js';

/** Output formats of `query`. */
export const OUTPUT_FORMATS = ['table', 'json', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Columns of the table: heading and how a record fills it. */
const TABLE_COLUMNS: ReadonlyArray<readonly [string, (record: QueryRecord) => string]> = [
  ['Instrument', (record) => record.instrument],
  ['Data Level', (record) => record.data_level ?? ''],
  ['Descriptor', (record) => record.descriptor],
  ['Start Date', (record) => record.start_date],
  ['End Date', (record) => record.end_date ?? ''],
  ['Version', (record) => record.version],
  ['Ingestion Date', (record) => record.ingestion_date ?? ''],
  ['Filename', (record) => fileName(record.file_path)],
];

/** Fields of a CSV row, in order; the header row names them. */
export const CSV_FIELDS = [
  'file_path',
  'instrument',
  'data_level',
  'descriptor',
  'start_date',
  'end_date',
  'version',
  'extension',
  'ingestion_date',
] as const satisfies ReadonlyArray<keyof QueryRecord>;

/** The line above the table, worded as the service's earlier client words it (scripts match on it). */
export function foundLine(count: number): string {
  return `Found [${count}] matching files\n`;
}

/** The `Found [N] matching files` line and, when anything matched, a table of the records. */
export function formatTable(records: readonly QueryRecord[]): string {
  if (records.length === 0) return foundLine(0);
  // Plain characters only: no colours, so the table reads the same in a file or a pipe.
  const table = new Table({
    head: TABLE_COLUMNS.map(([heading]) => heading),
    style: { head: [], border: [] },
  });
  for (const record of records) table.push(TABLE_COLUMNS.map(([, cell]) => cell(record)));
  return `${foundLine(records.length)}${table.toString()}\n`;
}

/** A JSON array of the records exactly as received. */
export function formatJson(records: readonly QueryRecord[]): string {
  return `${JSON.stringify(records, null, 2)}\n`;
}

/** RFC 4180 CSV: a header row, CRLF line ends, fields quoted when they hold a comma, a quote, CR or LF. */
export function formatCsv(records: readonly QueryRecord[]): string {
  const rows = [CSV_FIELDS.join(',')];
  for (const record of records) {
    rows.push(CSV_FIELDS.map((field) => csvField(record[field])).join(','));
  }
  return `${rows.join('\r\n')}\r\n`;
}

/** Renders records in the given format. */
export function formatRecords(records: readonly QueryRecord[], format: OutputFormat): string {
  switch (format) {
    case 'json':
      return formatJson(records);
    case 'csv':
      return formatCsv(records);
    default:
      return formatTable(records);
  }
}

/** One CSV field; null and absent values are empty. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function fileName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
