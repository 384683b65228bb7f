/**
 * Renders query records as a table, JSON or CSV: pure functions returning the text the command prints.
 *
 * The table is drawn here rather than with cli-table3: for 8,338 records cli-table3 took 3.6-5.2 s against
 * 8-25 ms for JSON (measured on this project's 2-core machine), far beyond a 2x budget, and it cannot leave out
 * columns to fit a terminal anyway. This renderer is a few string joins per row.
 */
import type { QueryRecord, SpiceRecord } from '../naming/query-records.js';
import { isSpiceRecord, type ReceivedRecord } from '../service/records.js';

export { OUTPUT_FORMATS, type OutputFormat } from './options.js';

/** A column of the table: heading and how a record fills it. */
interface Column {
  heading: string;
  cell: (record: ReceivedRecord) => string;
}

/** A field of a record as text: blank when absent or null (a newer form's record may lack any), numbers as digits. */
function fieldText(record: ReceivedRecord, field: string): string {
  const value = (record as Readonly<Record<string, unknown>>)[field];
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const fieldColumn = (heading: string, field: string): Column => ({
  heading,
  cell: (record) => fieldText(record, field),
});

const INSTRUMENT = fieldColumn('Instrument', 'instrument');
const DATA_LEVEL = fieldColumn('Data Level', 'data_level');
const DESCRIPTOR = fieldColumn('Descriptor', 'descriptor');
const START_DATE = fieldColumn('Start Date', 'start_date');
const END_DATE = fieldColumn('End Date', 'end_date');
/** Today's science: the repointing and Carrington-rotation numbers, shown when a record has one. */
const REPOINTING = fieldColumn('Repointing', 'repointing');
const CR = fieldColumn('CR', 'cr');
const VERSION = fieldColumn('Version', 'version');
const INGESTED = fieldColumn('Ingestion Date', 'ingestion_date');
/** The day alone (`YYYY-MM-DD`), for narrower terminals. */
const INGESTED_DAY: Column = {
  heading: 'Ingested',
  cell: (record) => fieldText(record, 'ingestion_date').slice(0, 10),
};
const FILENAME: Column = { heading: 'Filename', cell: (record) => fileName(record.file_path) };
const KERNEL_TYPE = fieldColumn('Kernel Type', 'kernel_type');
const COVERAGE_START = fieldColumn('Coverage Start', 'min_date_datetime');
const COVERAGE_END = fieldColumn('Coverage End', 'max_date_datetime');
/** The day alone of a coverage date, for narrower terminals. */
const dayColumn = (heading: string, field: string): Column => ({
  heading,
  cell: (record) => fieldText(record, field).slice(0, 10),
});
const SPICE_NAME: Column = {
  heading: 'Filename',
  cell: (record) => (isSpiceRecord(record) ? record.file_name : fileName(record.file_path)),
};

/**
 * The layouts tried in turn on a terminal, widest first; the first that fits is drawn. What goes first is what
 * the file name already says (end date, level, descriptor, instrument, start date, version); the ingestion day
 * goes last, as the name does not carry it, and the file name (what `download` takes) always stays. Columns no
 * record fills (see `shownColumns`) are left out of every layout.
 */
const LAYOUTS: ReadonlyArray<readonly Column[]> = [
  [INSTRUMENT, DATA_LEVEL, DESCRIPTOR, START_DATE, REPOINTING, CR, END_DATE, VERSION, INGESTED, FILENAME],
  [INSTRUMENT, DATA_LEVEL, DESCRIPTOR, START_DATE, REPOINTING, CR, VERSION, INGESTED, FILENAME],
  [INSTRUMENT, DESCRIPTOR, START_DATE, REPOINTING, CR, VERSION, INGESTED, FILENAME],
  [INSTRUMENT, DESCRIPTOR, START_DATE, VERSION, INGESTED_DAY, FILENAME],
  [INSTRUMENT, START_DATE, VERSION, INGESTED_DAY, FILENAME],
  [START_DATE, VERSION, INGESTED_DAY, FILENAME],
  [VERSION, INGESTED_DAY, FILENAME],
  [INGESTED_DAY, FILENAME],
  [FILENAME],
];

/** The layouts of SPICE kernels (`--table spice`): type, coverage, version, ingestion, name. */
const SPICE_LAYOUTS: ReadonlyArray<readonly Column[]> = [
  [KERNEL_TYPE, COVERAGE_START, COVERAGE_END, VERSION, INGESTED, SPICE_NAME],
  [
    KERNEL_TYPE,
    dayColumn('Coverage Start', 'min_date_datetime'),
    dayColumn('Coverage End', 'max_date_datetime'),
    VERSION,
    INGESTED_DAY,
    SPICE_NAME,
  ],
  [KERNEL_TYPE, VERSION, INGESTED_DAY, SPICE_NAME],
  [KERNEL_TYPE, SPICE_NAME],
  [SPICE_NAME],
];

/**
 * The layouts for these records, without the columns none of them fills: Repointing and CR appear when a record
 * has a value for them, End Date when a record carries the field (today's science records have none).
 */
function layoutsFor(records: readonly ReceivedRecord[]): ReadonlyArray<readonly Column[]> {
  if (records.every(isSpiceRecord)) return SPICE_LAYOUTS;
  const has = (field: string, present: (value: unknown) => boolean) =>
    records.some((record) => present((record as Readonly<Record<string, unknown>>)[field]));
  const filled = (value: unknown) => value !== undefined && value !== null && value !== '';
  const hidden = new Set<Column>();
  if (!has('repointing', filled)) hidden.add(REPOINTING);
  if (!has('cr', filled)) hidden.add(CR);
  if (!has('end_date', (value) => value !== undefined)) hidden.add(END_DATE);
  return LAYOUTS.map((layout) => layout.filter((column) => !hidden.has(column)));
}

const GAP = '  ';

/** The first fields of a CSV row, in order; the header row names them, then every other field a record has. */
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

/** The first fields of a CSV row of SPICE kernels. */
export const SPICE_CSV_FIELDS = [
  'file_name',
  'kernel_type',
  'min_date_datetime',
  'max_date_datetime',
  'version',
  'ingestion_date',
  'file_path',
] as const satisfies ReadonlyArray<keyof SpiceRecord>;

/**
 * The count line, worded as the service's earlier client words it; the command line writes it on stderr (it is
 * no result: a pipe of the table gets the rows alone, and `--quiet` leaves it out).
 */
export function foundLine(count: number): string {
  return `Found [${count}] matching files\n`;
}

/** How to draw the table. */
export interface TableOptions {
  /**
   * Columns of the terminal the table goes to. Given, the table fits it: less useful columns are left out and, as
   * a last resort, file names are shortened in the middle; no row ever wraps. Left out (a pipe or a file), every
   * column is drawn in full.
   */
  width?: number | undefined;
}

/**
 * A compact table of the records, when anything matched (nothing otherwise): a heading row, a rule under it, one
 * line per record, columns two spaces apart. The count line is `foundLine`.
 */
export function formatTable(records: readonly ReceivedRecord[], options: TableOptions = {}): string {
  if (records.length === 0) return '';
  const width = options.width !== undefined && options.width > 0 ? options.width : undefined;
  const layouts = layoutsFor(records);
  let columns = layouts[0] as readonly Column[];
  let cells = tableCells(records, columns);
  let widths = columnWidths(columns, cells);
  if (width !== undefined) {
    for (const layout of layouts.slice(1)) {
      if (tableWidth(widths) <= width) break;
      columns = layout;
      cells = tableCells(records, columns);
      widths = columnWidths(columns, cells);
    }
    const over = tableWidth(widths) - width;
    if (over > 0) {
      // Even the file name alone is too wide: shorten the widest names in the middle, keeping both ends.
      const last = widths.length - 1;
      const room = Math.max(5, (widths[last] ?? 0) - over);
      widths[last] = room;
      for (const row of cells) row[last] = elide(row[last] ?? '', room);
    }
  }
  const lines = new Array<string>(cells.length + 2);
  lines[0] = joinRow(
    columns.map((column) => column.heading),
    widths,
  );
  lines[1] = widths.map((size) => '-'.repeat(size)).join(GAP);
  for (let row = 0; row < cells.length; row += 1) lines[row + 2] = joinRow(cells[row] as string[], widths);
  return `${lines.join('\n')}\n`;
}

function tableCells(records: readonly ReceivedRecord[], columns: readonly Column[]): string[][] {
  return records.map((record) => columns.map((column) => displayText(column.cell(record))));
}

function columnWidths(columns: readonly Column[], cells: readonly string[][]): number[] {
  return columns.map((column, index) =>
    cells.reduce(
      (widest, row) => Math.max(widest, displayWidth(row[index] ?? '')),
      displayWidth(column.heading),
    ),
  );
}

function tableWidth(widths: readonly number[]): number {
  return widths.reduce((sum, size) => sum + size, 0) + GAP.length * Math.max(0, widths.length - 1);
}

/** One row, each cell padded to its column's width; the last cell is not padded (no trailing spaces). */
function joinRow(cells: readonly string[], widths: readonly number[]): string {
  let line = '';
  const last = cells.length - 1;
  for (let index = 0; index < last; index += 1) {
    const cell = cells[index] ?? '';
    line += cell + ' '.repeat(Math.max(0, (widths[index] ?? 0) - displayWidth(cell))) + GAP;
  }
  return line + (cells[last] ?? '');
}

/** `text` cut to `width` columns by replacing its middle with `…`, keeping its start and its end (version, extension). */
function elide(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  const characters = [...text];
  const tailWidth = Math.floor((width - 1) / 2);
  let tail = '';
  for (let index = characters.length - 1; index >= 0; index -= 1) {
    const char = characters[index] as string;
    if (displayWidth(tail) + displayWidth(char) > tailWidth) break;
    tail = char + tail;
  }
  let head = '';
  for (const char of characters) {
    if (displayWidth(head) + displayWidth(char) + 1 + displayWidth(tail) > width) break;
    head += char;
  }
  return `${head}…${tail}`;
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

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is what is tested
const NON_ASCII = /[^\u0000-\u007f]/;

/** Columns a text takes: one per ASCII character, two for any other (never less than the terminal draws). */
function displayWidth(text: string): number {
  // Nearly every cell is ASCII: its width is its length, without walking it.
  if (!NON_ASCII.test(text)) return text.length;
  let width = 0;
  for (const char of text) width += char.charCodeAt(0) < 0x80 ? 1 : 2;
  return width;
}

/** A JSON array of the records exactly as received. */
export function formatJson(records: readonly ReceivedRecord[]): string {
  return `${JSON.stringify(records, null, 2)}\n`;
}

/**
 * The columns of a CSV of these records: the usual fields first (`CSV_FIELDS`, or `SPICE_CSV_FIELDS` when every
 * record is a SPICE kernel's), then every other field any record has, in the order they first appear: nothing a
 * service sent is left out, whatever the mix of records.
 */
export function csvColumns(records: readonly ReceivedRecord[]): string[] {
  const first: readonly string[] =
    records.length > 0 && records.every(isSpiceRecord) ? SPICE_CSV_FIELDS : CSV_FIELDS;
  const columns = new Set<string>(first);
  for (const record of records) for (const field of Object.keys(record)) columns.add(field);
  return [...columns];
}

/**
 * CSV: a header row, fields quoted when they hold a comma, a quote, CR or LF. Lines end in LF, as Unix tools
 * expect: RFC 4180 writes CRLF, but its MIME registration of `text/csv` allows other line breaks and every CSV
 * reader accepts LF (a CR or LF inside a quoted field is kept as given).
 */
export function formatCsv(records: readonly ReceivedRecord[]): string {
  const columns = csvColumns(records);
  const rows = [columns.join(',')];
  for (const record of records) {
    const fields = record as Readonly<Record<string, unknown>>;
    rows.push(columns.map((field) => csvField(fields[field])).join(','));
  }
  return `${rows.join('\n')}\n`;
}

/** One CSV field; null and absent values are empty. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows of CSV text as `formatCsv` writes it (RFC 4180 quoting; LF or CRLF line ends); blank lines are skipped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== '') rows.push(row);
    row = [];
    field = '';
  };
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char !== '"') field += char;
      else if (text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n') endRow();
    else if (char !== '\r') field += char;
  }
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

function fileName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
