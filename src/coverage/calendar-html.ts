/**
 * The coverage calendar as one self-contained HTML page: an inline SVG calendar per product (a row per month, a
 * square per day, a tooltip naming the day's file), its styles inline, no script and nothing fetched, so the page
 * opens anywhere, offline, and can be mailed or archived as it is.
 */
import {
  coverageWords,
  DAY_WORDS,
  latestVersions,
  productName,
  showGap,
  summaryLine,
} from './calendar-text.js';
import { dayNumber, daysInMonth, monthsBetween, showDate } from './days.js';
import type { CoverageReport, DayState, ProductCoverage } from './types.js';

/** The fill of each day state. */
export const DAY_COLOURS: Readonly<Record<DayState, string>> = {
  archive: '#4c78a8',
  local: '#2e8b57',
  outdated: '#e0a800',
  missing: '#f2d4d4',
};

/** Pixels of a day's square, and of the space after it. */
const SQUARE = 14;
const STEP = 16;
/** Room for the month labels on the left and the day numbers on top. */
const LEFT = 64;
const TOP = 18;

/** Text made safe inside HTML and SVG, in content and in quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** What a page says of where its calendar comes from: the archive's URL, the data root, and when it was made. */
export interface CalendarSource {
  /** The service whose archive was asked. */
  archive?: string | undefined;
  /** The data root compared with it. */
  dataRoot?: string | undefined;
  /** When the report was made; default now. */
  madeAt?: Date | undefined;
}

/**
 * The page: a title, what it shows (the range, the archive, the data root, when it was made), a legend, then a
 * section with an SVG calendar per product.
 */
export function formatCalendarHtml(
  report: CoverageReport,
  options: { title?: string } & CalendarSource = {},
): string {
  const title = options.title ?? 'Archive coverage';
  const range = report.products.length
    ? `${showDate(report.startDate)} to ${showDate(report.endDate)}`
    : 'no files match';
  const made = (options.madeAt ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z');
  const facts = [
    ['Days', range],
    ...(options.archive ? [['Archive', options.archive]] : []),
    ...(options.dataRoot ? [['Data root', options.dataRoot]] : []),
    ['Made', made],
  ]
    .map(([term, value]) => `<dt>${escapeHtml(term as string)}</dt><dd>${escapeHtml(value as string)}</dd>`)
    .join('');
  const legend = (Object.keys(DAY_COLOURS) as DayState[])
    .map(
      (state) =>
        `<li><svg width="${SQUARE}" height="${SQUARE}" aria-hidden="true"><rect width="${SQUARE}" height="${SQUARE}" fill="${DAY_COLOURS[state]}"/></svg> ${escapeHtml(DAY_WORDS[state])}</li>`,
    )
    .join('');
  const sections = report.products.map((product) => productSection(product, report)).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-bottom: .2em; }
ul.legend { list-style: none; padding: 0; display: flex; gap: 1.5em; flex-wrap: wrap; }
ul.legend svg { vertical-align: middle; }
svg.calendar text { font: 11px system-ui, sans-serif; fill: #555; }
p.gaps { color: #8b0000; }
dl.source { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; }
dl.source dt { color: #555; } dl.source dd { margin: 0; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<dl class="source">${facts}</dl>
<ul class="legend">${legend}</ul>
${sections}
</body>
</html>
`;
}

function productSection(product: ProductCoverage, report: CoverageReport): string {
  const gaps = product.gaps.length
    ? `<p class="gaps">Gaps: ${product.gaps.map((gap) => escapeHtml(showGap(gap))).join(', ')}</p>`
    : '';
  const versions = latestVersions(product);
  const latest = versions.length
    ? `<p class="versions">Latest versions: ${versions.map(escapeHtml).join(', ')}</p>`
    : '';
  return `<section>
<h2>${escapeHtml(productName(product))}</h2>
<p>${escapeHtml(coverageWords(product))}</p>
${productSvg(product, report)}
${gaps}${gaps && latest ? '\n' : ''}${latest}
</section>`;
}

/** One product's calendar: a `rect` per day in range, with `data-date`, `data-state` and a `title`. */
export function productSvg(product: ProductCoverage, report: CoverageReport): string {
  const first = dayNumber(report.startDate);
  const last = dayNumber(report.endDate);
  const months = monthsBetween(first, last);
  const byDay = new Map(product.days.map((day) => [day.date, day]));
  const width = LEFT + 31 * STEP;
  const height = TOP + months.length * STEP;
  const parts: string[] = [];
  for (const day of [1, 5, 10, 15, 20, 25, 30]) {
    parts.push(`<text x="${LEFT + (day - 1) * STEP}" y="12">${day}</text>`);
  }
  months.forEach(({ year, month, first: monthStart }, row) => {
    const y = TOP + row * STEP;
    const label = `${year}-${String(month).padStart(2, '0')}`;
    parts.push(`<text x="0" y="${y + SQUARE - 3}">${label}</text>`);
    for (let index = 0; index < daysInMonth(year, month); index += 1) {
      const dayNo = monthStart + index;
      if (dayNo < first || dayNo > last) continue;
      const date = `${label.replace('-', '')}${String(index + 1).padStart(2, '0')}`;
      const day = byDay.get(date);
      const state: DayState = day?.state ?? 'missing';
      const words = [showDate(date), DAY_WORDS[state]];
      if (day?.filePath) words.push(day.filePath.slice(day.filePath.lastIndexOf('/') + 1));
      if (day?.localVersion && state === 'outdated') words.push(`here: ${day.localVersion}`);
      parts.push(
        `<rect x="${LEFT + index * STEP}" y="${y}" width="${SQUARE}" height="${SQUARE}" fill="${DAY_COLOURS[state]}" data-date="${date}" data-state="${state}"${day?.version ? ` data-version="${escapeHtml(day.version)}"` : ''}><title>${escapeHtml(words.join(' · '))}</title></rect>`,
      );
    }
  });
  return `<svg class="calendar" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(summaryLine(product))}">
${parts.join('\n')}
</svg>`;
}
