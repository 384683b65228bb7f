/** The coverage calendar and status rules as pure functions: ranges, gaps, marks, widths, scope and targets. */
import { describe, expect, it } from 'vitest';
import { formatCalendar } from '../../src/coverage/calendar-text.js';
import { buildCoverage, gapsOf } from '../../src/coverage/coverage.js';
import { matchesFilters, scopeFolders } from '../../src/coverage/scope.js';
import { statusTargets } from '../../src/coverage/status-targets.js';
import type { CoverageDay, StatusReport } from '../../src/coverage/types.js';
import { parseName } from '../../src/naming/names.js';

const file = (level: string, date: string, version = 'v01-00', descriptor = 'norm') =>
  parseName(`imap_mag_${level}_${descriptor}_${date}_${date}_${version}.cdf`);

describe('buildCoverage', () => {
  it('spans the first to the last day with a file when no dates are given, for every product alike', () => {
    const report = buildCoverage([file('l1a', '20240227'), file('l1b', '20240302')], [], {
      instrument: 'mag',
    });
    expect([report.startDate, report.endDate]).toEqual(['20240227', '20240302']);
    // 2024 is a leap year: 27, 28, 29 February, 1 and 2 March.
    expect(report.products.map((product) => product.days.length)).toEqual([5, 5]);
    expect(report.products[0]?.gaps).toEqual([{ start: '20240228', end: '20240302', days: 4 }]);
    expect(report.products[1]?.gaps).toEqual([{ start: '20240227', end: '20240301', days: 4 }]);
  });

  it('takes the highest version of a day, and tells a local latest from a local older version', () => {
    const archive = [
      file('l1a', '20250101'),
      file('l1a', '20250101', 'v01-10'),
      file('l1a', '20250101', 'v01-02'),
    ];
    const report = buildCoverage(archive, [file('l1a', '20250101', 'v01-02')], {
      startDate: '20250101',
      endDate: '20250101',
    });
    expect(report.products[0]?.days).toEqual([
      {
        date: '20250101',
        state: 'outdated',
        version: 'v01-10',
        filePath: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250101_20250101_v01-10.cdf',
        localVersion: 'v01-02',
      },
    ]);
    const current = buildCoverage(archive, [file('l1a', '20250101', 'v01-10')], {});
    expect(current.products[0]?.days[0]?.state).toBe('local');
  });

  it('answers no products when nothing matches', () => {
    expect(buildCoverage([], [], { instrument: 'mag' }).products).toEqual([]);
  });
});

describe('gapsOf', () => {
  it('joins consecutive missing days, including at both ends of the range', () => {
    const days: CoverageDay[] = ['missing', 'archive', 'missing', 'missing', 'local', 'missing'].map(
      (state, at) => ({
        date: `2025010${at + 1}`,
        state: state as CoverageDay['state'],
      }),
    );
    expect(gapsOf(days)).toEqual([
      { start: '20250101', end: '20250101', days: 1 },
      { start: '20250103', end: '20250104', days: 2 },
      { start: '20250106', end: '20250106', days: 1 },
    ]);
  });
});

describe('formatCalendar', () => {
  it('fits 80 columns, blanks days outside the range, and puts each mark under its day', () => {
    const archive = [
      file('l1a', '20250130'),
      file('l1a', '20250131', 'v01-00', 'a-rather-long-descriptor-name'),
    ];
    const text = formatCalendar(
      buildCoverage(archive, [file('l1a', '20250130')], { startDate: '20250129', endDate: '20250203' }),
    );
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    const rows = lines
      .slice(lines.indexOf('mag l1a norm: 1 of 6 days, 5 missing in 2 gaps'))
      .filter((line) => line.startsWith('2025-0'));
    // Products in order of instrument, level and descriptor; in this one: 29 missing, 30 here, 31 missing; 1 to 3 February missing; days before the 29th blank.
    expect(rows[0]).toBe(`2025-01  ${' '.repeat(56)}. @ . 1/3`);
    expect(rows[1]).toBe(`2025-02  . . .${' '.repeat(57)}0/3`);
    expect(text).toContain('mag l1a norm: 1 of 6 days, 5 missing in 2 gaps');
    expect(text).toContain('gaps: 2025-01-29, 2025-01-31 to 2025-02-03 (4 days)');
  });
});

describe('scope of local files', () => {
  it('selects by name as the archive selects by record, a latest version filter selecting every version', () => {
    const filters = { instrument: 'mag', dataLevel: 'l1a', startDate: '20250102', version: 'latest' };
    expect(matchesFilters(file('l1a', '20250102', 'v03-00'), filters)).toBe(true);
    expect(matchesFilters(file('l1a', '20250101'), filters)).toBe(false);
    expect(matchesFilters(file('l1b', '20250102'), filters)).toBe(false);
    expect(matchesFilters(parseName('imap_mag_calibration_20250102_v01-00.cdf'), { instrument: 'mag' })).toBe(
      false,
    );
    expect(scopeFolders(filters)).toEqual([['imap', 'mag', 'l1a']]);
    expect(scopeFolders({ table: 'ancillary', instrument: 'mag' })).toEqual([['imap', 'ancillary', 'mag']]);
  });
});

describe('statusTargets', () => {
  it('fetches the missing files, or also the newer versions and the changed files', () => {
    const report: StatusReport = {
      inStep: false,
      entries: [
        { status: 'changed', path: 'a' },
        { status: 'extra', path: 'b' },
        { status: 'missing', path: 'c' },
        { status: 'outdated', path: 'd', newer: 'e' },
      ],
      counts: { missing: 1, outdated: 1, extra: 1, changed: 1 },
      localFiles: 3,
      unrecorded: 0,
      archiveFiles: 4,
      currentFiles: 3,
      currentHere: 1,
    };
    expect(statusTargets(report, 'missing')).toEqual(['c']);
    expect(statusTargets(report, 'update')).toEqual(['a', 'c', 'e']);
  });
});
