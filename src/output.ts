/** Renders query records as a table, JSON or CSV: pure functions returning the text the command prints. */
import Table from 'cli-table3';
import type { QueryRecord } from './query-vocabulary.js';
import type { ReceivedRecord } from './records.js';

/** Output formats of `query`. */
export const OUTPUT_FORMATS = ['table', 'json', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Columns of the table: heading and how a record fills it. */
// A record of a newer naming form may lack any field but file_path: its cells are left blank.
const TABLE_COLUMNS: ReadonlyArray<readonly [string, (record: ReceivedRecord) => string]> = [
  ['Instrument', (record) => record.instrument ?? ''],
  ['Data Level', (record) => record.data_level ?? ''],
  ['Descriptor', (record) => record.descriptor ?? ''],
  ['Start Date', (record) => record.start_date ?? ''],
  ['End Date', (record) => record.end_date ?? ''],
  ['Version', (record) => record.version ?? ''],
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

/**
 * Rows per cli-table3 table. Its layout pass (row and column spans) grows with the square of the rows: 8,000
 * rows take ~8 s in one table and ~1.5 s in pieces of this size, the rest being its cost per cell.
 */
const TABLE_PIECE_ROWS = 100;

/** The `Found [N] matching files` line and, when anything matched, a table of the records. */
export function formatTable(records: readonly ReceivedRecord[]): string {
  if (records.length === 0) return foundLine(0);
  const head = TABLE_COLUMNS.map(([heading]) => heading);
  const rows = records.map((record) => TABLE_COLUMNS.map(([, cell]) => displayText(cell(record))));
  // Every piece gets the same column widths (content plus one space each side), so the pieces join into one
  // table: each piece's bottom border becomes a row separator and the next piece's top border is dropped.
  const colWidths = head.map(
    (heading, column) =>
      rows.reduce((widest, row) => Math.max(widest, displayWidth(row[column] ?? '')), displayWidth(heading)) +
      2,
  );
  const pieces: string[] = [];
  for (let start = 0; start < rows.length; start += TABLE_PIECE_ROWS) {
    // Plain characters only: no colours, so the table reads the same in a file or a pipe.
    const table = new Table({ ...(start === 0 ? { head } : {}), colWidths, style: { head: [], border: [] } });
    table.push(...rows.slice(start, start + TABLE_PIECE_ROWS));
    const lines = table.toString().split('\n');
    if (start > 0) lines.shift();
    if (start + TABLE_PIECE_ROWS < rows.length) {
      lines.push((lines.pop() ?? '').replace('└', '├').replaceAll('┴', '┼').replace('┘', '┤'));
    }
    pieces.push(lines.join('\n'));
  }
  return `${foundLine(records.length)}${pieces.join('\n')}\n`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is replaced here
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A field as the terminal may show it: control characters (a server could send escape sequences that move the
 * cursor or retitle the window) are shown as `\u` escapes instead of being written raw.
 */
function displayText(value: string): string {
  return value.replace(
    CONTROL_CHARACTERS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Columns a text takes: one per ASCII character, two for any other (never less than the terminal draws). */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += char.charCodeAt(0) < 0x80 ? 1 : 2;
  return width;
}

/** A JSON array of the records exactly as received. */
export function formatJson(records: readonly ReceivedRecord[]): string {
  return `${JSON.stringify(records, null, 2)}\n`;
}

/** RFC 4180 CSV: a header row, CRLF line ends, fields quoted when they hold a comma, a quote, CR or LF. */
export function formatCsv(records: readonly ReceivedRecord[]): string {
  const rows = [CSV_FIELDS.join(',')];
  for (const record of records) {
    rows.push(CSV_FIELDS.map((field) => csvField(record[field])).join(','));
  }
  return `${rows.join('\r\n')}\r\n`;
}

/** Renders records in the given format. */
export function formatRecords(
  records: readonly ReceivedRecord[],
  format: OutputFormat,
): string {
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
