/** The coverage report as records, one per product and day, for `--output-format json` and `csv`. */
import type { CoverageReport, DayState } from './types.js';

/** One day of one product, flat. */
export interface CoverageRow {
  instrument: string;
  data_level: string | undefined;
  descriptor: string;
  /** `YYYYMMDD`. */
  date: string;
  state: DayState;
  /** The archive's latest version for the day. */
  version: string | undefined;
  file_path: string | undefined;
  /** The highest version the data root holds for the day. */
  local_version: string | undefined;
}

/** The fields of a row, in order; the CSV header names them. */
export const COVERAGE_FIELDS = [
  'instrument',
  'data_level',
  'descriptor',
  'date',
  'state',
  'version',
  'file_path',
  'local_version',
] as const satisfies ReadonlyArray<keyof CoverageRow>;

/** Every day of every product of the report, products in order, days in order. */
export function coverageRows(report: CoverageReport): CoverageRow[] {
  return report.products.flatMap((product) =>
    product.days.map((day) => ({
      instrument: product.instrument,
      data_level: product.dataLevel,
      descriptor: product.descriptor,
      date: day.date,
      state: day.state,
      version: day.version,
      file_path: day.filePath,
      local_version: day.localVersion,
    })),
  );
}

/** The rows as a JSON array (absent values as null, so every record has every field). */
export function formatCoverageJson(report: CoverageReport): string {
  const rows = coverageRows(report).map((row) =>
    Object.fromEntries(COVERAGE_FIELDS.map((field) => [field, row[field] ?? null])),
  );
  return `${JSON.stringify(rows, null, 2)}\n`;
}

/** The rows as CSV with a header row. */
export function formatCoverageCsv(report: CoverageReport): string {
  const lines = [COVERAGE_FIELDS.join(',')];
  for (const row of coverageRows(report))
    lines.push(COVERAGE_FIELDS.map((field) => csvField(row[field])).join(','));
  return `${lines.join('\n')}\n`;
}

/** A CSV field, quoted when it must be (as `output.ts` quotes query records; that module sits a layer above). */
function csvField(value: string | undefined): string {
  if (value === undefined) return '';
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
