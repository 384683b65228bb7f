/** The coverage page (`--html`): what the terminal's calendar says of each product, the page says too. */
import { describe, expect, it } from 'vitest';
import { formatCalendarHtml } from '../../src/coverage/calendar-html.js';
import { formatCalendar } from '../../src/coverage/calendar-text.js';
import { buildCoverage } from '../../src/coverage/coverage.js';
import { parseName } from '../../src/naming/names.js';

const file = (date: string, version: string, descriptor = 'norm') =>
  parseName(`imap_mag_l1a_${descriptor}_${date}_${date}_${version}.cdf`);

/** The report of a week of one product: two days of v01-00, three of v01-01 (one held here), two days missing. */
function week() {
  const archive = [
    file('20250101', 'v01-00'),
    file('20250102', 'v01-01'),
    file('20250102', 'v01-00'),
    file('20250103', 'v01-01'),
    file('20250106', 'v01-00'),
    file('20250107', 'v01-01'),
    file('20250101', 'v01-00', 'burst'),
  ];
  return buildCoverage(archive, [file('20250103', 'v01-01')], { startDate: '20250101', endDate: '20250107' });
}

describe('the coverage page', () => {
  it("lists each product's latest versions, as the terminal's calendar does", () => {
    const report = week();
    const page = formatCalendarHtml(report, { madeAt: new Date('2025-02-01T00:00:00Z') });
    expect(page).toContain('<p class="versions">Latest versions: v01-01 on 3 days, v01-00 on 2 days</p>');
    expect(page).toContain('<p class="versions">Latest versions: v01-00 on 1 day</p>');
    // The same words, product by product, as the terminal's `latest versions:` lines.
    const terminal = formatCalendar(report)
      .split('\n')
      .filter((line) => line.startsWith('latest versions: '))
      .map((line) => line.slice('latest versions: '.length));
    const onPage = [...page.matchAll(/<p class="versions">Latest versions: ([^<]*)<\/p>/g)].map(
      (match) => match[1],
    );
    expect(onPage).toEqual(terminal);
    expect(onPage).toHaveLength(report.products.length);
  });

  it('puts the line after the gaps, inside the section of its product', () => {
    const page = formatCalendarHtml(week());
    const norm = page.slice(
      page.indexOf('<h2>mag l1a norm</h2>'),
      page.indexOf('</section>', page.indexOf('<h2>mag l1a norm</h2>')),
    );
    expect(norm).toMatch(
      /<\/svg>\n<p class="gaps">Gaps: [^<]*<\/p>\n<p class="versions">Latest versions: [^<]*<\/p>\n$/,
    );
  });
});
