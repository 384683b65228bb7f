/**
 * The coverage calendar as text for a terminal: one row per month, one cell per day, in plain ASCII (any
 * terminal, any font, a log file). At 80 columns and wider each day's mark has a space after it; narrower, the
 * marks sit side by side (a month in 31 columns), so no row wraps on a terminal of 46 columns or more. Marks: `#` in the archive, `@` here at the latest version,
 * `^` here but the archive has a newer version, `.` no file; days outside the range are blank.
 */
import { dayNumber, daysInMonth, monthsBetween, showDate } from './days.js';
import type { CoverageGap, CoverageReport, DayState, ProductCoverage } from './types.js';

/** The mark of each day state. */
export const DAY_MARKS: Readonly<Record<DayState, string>> = {
  archive: '#',
  local: '@',
  outdated: '^',
  missing: '.',
};

/** What each mark means, as the legend says it. */
export const DAY_WORDS: Readonly<Record<DayState, string>> = {
  archive: 'in the archive',
  local: 'here, latest',
  outdated: 'here, older than the archive',
  missing: 'no file',
};

/** The widest line drawn, unless a terminal's width says otherwise. */
export const CALENDAR_WIDTH = 80;
/** `2025-01` and the space before the first cell. */
const LABEL = 9;
/** The columns a row of the spaced form takes: the label, 31 cells of a mark and a space, `31/31`. */
const SPACED_WIDTH = LABEL + 31 * 2 + 5;

/** How a calendar is drawn: the widest line, and the columns of a day's cell (2 spaced, 1 compact). */
interface Layout {
  width: number;
  cell: number;
}

/** The layout for a terminal of `width` columns: the spaced form where it fits, the compact one otherwise. */
function layoutFor(width: number): Layout {
  return { width, cell: width >= SPACED_WIDTH + 1 ? 2 : 1 };
}
const RULER_DAYS = [1, 5, 10, 15, 20, 25, 30];

/** The name a calendar goes by: `mag l1a norm-mago`, or `ancillary mag calibration`. */
export function productName(product: ProductCoverage): string {
  return product.table === 'ancillary'
    ? `ancillary ${product.instrument} ${product.descriptor}`
    : `${product.instrument} ${product.dataLevel ?? ''} ${product.descriptor}`;
}

/** The line above a calendar: its name, how many days have a file, and the gaps in numbers. */
export function summaryLine(product: ProductCoverage): string {
  return `${productName(product)}: ${coverageWords(product)}`;
}

/** How many days have a file, and the gaps in numbers: `9 of 90 days, 81 missing in 9 gaps`. */
export function coverageWords(product: ProductCoverage): string {
  const total = product.days.length;
  const missing = total - product.present;
  const gaps = product.gaps.length;
  const gapWords = gaps === 0 ? 'no gaps' : `${missing} missing in ${gaps} ${gaps === 1 ? 'gap' : 'gaps'}`;
  return `${product.present} of ${total} ${total === 1 ? 'day' : 'days'}, ${gapWords}`;
}

/** A gap in words: `2025-02-10 to 2025-02-12 (3 days)`, or one day's date. */
export function showGap(gap: CoverageGap): string {
  return gap.days === 1
    ? showDate(gap.start)
    : `${showDate(gap.start)} to ${showDate(gap.end)} (${gap.days} days)`;
}

/**
 * The whole report: a calendar per product, then the legend, in lines of at most `width` columns (a terminal's
 * width; 80 by default) where the compact form fits.
 */
export function formatCalendar(report: CoverageReport, options: { width?: number | undefined } = {}): string {
  if (report.products.length === 0) return '';
  const layout = layoutFor(Math.max(1, Math.floor(options.width ?? CALENDAR_WIDTH)));
  const blocks = report.products.map((product) => productCalendar(product, report, layout));
  const legend = wrap(
    (Object.keys(DAY_MARKS) as DayState[]).map((state) => `${DAY_MARKS[state]} ${DAY_WORDS[state]}`),
    '',
    '   ',
    layout.width,
  );
  return `${blocks.join('\n')}\n${legend.join('\n')}\n`;
}

function productCalendar(product: ProductCoverage, report: CoverageReport, layout: Layout): string {
  const { cell, width } = layout;
  const lines = [summaryLine(product), ruler(cell)];
  const first = dayNumber(report.startDate);
  const last = dayNumber(report.endDate);
  const byDay = new Map(product.days.map((day) => [day.date, day]));
  for (const { year, month, first: monthStart } of monthsBetween(first, last)) {
    const cells: string[] = [];
    let present = 0;
    let inRange = 0;
    const length = daysInMonth(year, month);
    for (let index = 0; index < length; index += 1) {
      const dayNo = monthStart + index;
      if (dayNo < first || dayNo > last) {
        cells.push(' ');
        continue;
      }
      const day = byDay.get(dateKey(year, month, index + 1));
      inRange += 1;
      if (day && day.state !== 'missing') present += 1;
      cells.push(DAY_MARKS[day?.state ?? 'missing']);
    }
    const row =
      `${year}-${String(month).padStart(2, '0')}`.padEnd(LABEL) +
      cells.join(cell === 2 ? ' ' : '').padEnd(31 * cell + (cell === 2 ? 0 : 1));
    lines.push(`${row}${present}/${inRange}`.trimEnd());
  }
  if (product.gaps.length > 0) lines.push(...wrap(product.gaps.map(showGap), 'gaps: ', ', ', width));
  const versions = latestVersions(product);
  if (versions.length > 0) lines.push(...wrap(versions, 'latest versions: ', ', ', width));
  return `${lines.join('\n')}\n`;
}

/** The archive's latest versions over a product's days: `v01-00 on 300 days`, per version, most days first. */
export function latestVersions(product: ProductCoverage): string[] {
  const counts = new Map<string, number>();
  for (const day of product.days)
    if (day.version) counts.set(day.version, (counts.get(day.version) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([version, days]) => `${version} on ${days} ${days === 1 ? 'day' : 'days'}`);
}

/** The day numbers above the cells (compact: those that do not run into each other). */
function ruler(cell: number): string {
  const line = Array.from({ length: LABEL + 31 * cell + 2 }, () => ' ');
  for (const day of cell === 2 ? RULER_DAYS : [1, 10, 20, 30]) {
    const text = String(day);
    for (let at = 0; at < text.length; at += 1) line[LABEL + (day - 1) * cell + at] = text[at] as string;
  }
  return line.join('').trimEnd();
}

function dateKey(year: number, month: number, day: number): string {
  return `${year}${String(month).padStart(2, '0')}${String(day).padStart(2, '0')}`;
}

/** Items joined by `separator` after `head`, broken into lines of at most `width` columns. */
function wrap(items: readonly string[], head: string, separator: string, width: number): string[] {
  const mark = separator.trimEnd();
  const joiner = separator.slice(mark.length);
  const indent = ' '.repeat(head.length);
  const lines: string[] = [];
  let line = head;
  let empty = true;
  for (const [index, item] of items.entries()) {
    const piece = index < items.length - 1 ? `${item}${mark}` : item;
    if (!empty && line.length + joiner.length + piece.length > width) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += (empty ? '' : joiner) + piece;
    empty = false;
  }
  lines.push(line);
  return lines;
}
