/**
 * The counts `status` prints on stderr: short lines that fit 80 columns, whatever the counts, naming only the
 * kinds of difference found; the records of `--output-format json` hold every entry counted.
 */
import { describe, expect, it } from 'vitest';
import { statusSummary } from '../../src/cli/commands/status.js';

type Report = Parameters<typeof statusSummary>[0];

/** A report of `counts` differences (no entries: the summary reads the counts). */
function report(
  counts: Partial<Report['counts']>,
  facts: Partial<Pick<Report, 'currentFiles' | 'currentHere' | 'unrecorded'>> = {},
): Report {
  const all = { missing: 0, outdated: 0, extra: 0, changed: 0, ...counts };
  // Only what the summary reads: a report's other facts are left out.
  const made = {
    inStep: Object.values(all).every((count) => count === 0),
    entries: [] as Report['entries'],
    counts: all,
    localFiles: 0,
    unrecorded: facts.unrecorded ?? 0,
    archiveFiles: facts.currentFiles ?? 0,
    currentFiles: facts.currentFiles ?? 0,
    currentHere: facts.currentHere ?? 0,
  };
  return made as Report;
}

const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));

describe('the counts of status', () => {
  it('name the kinds of difference found, and what of the archive is here, on lines of their own', () => {
    expect(
      statusSummary(
        report({ missing: 3, outdated: 2, extra: 3, changed: 2 }, { currentFiles: 1046, currentHere: 1041 }),
      ),
    ).toBe('3 missing, 2 outdated, 3 extra, 2 changed.\n1046 current files in the archive, 1041 here.\n');
  });

  it('leave out the kinds no file has', () => {
    expect(statusSummary(report({ outdated: 1 }, { currentFiles: 120, currentHere: 119 }))).toBe(
      '1 outdated.\n120 current files in the archive, 119 here.\n',
    );
    expect(statusSummary(report({ extra: 3 }, { currentFiles: 1046, currentHere: 1046 }), true)).toBe(
      '3 extra.\n1046 current files in the archive, 1046 here.\n',
    );
  });

  it('fit 80 columns with every count and six-figure numbers', () => {
    const text = statusSummary(
      report(
        { missing: 123_456, outdated: 123_456, extra: 123_456, changed: 123_456 },
        { currentFiles: 987_654, currentHere: 864_198, unrecorded: 123_456 },
      ),
    );
    expect(text.split('\n')).toHaveLength(4);
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(text).toContain('123456 local files not downloaded by mission-data: their bytes not compared.\n');
  });

  it('say the local files whose bytes could not be compared on a line of their own, in step or not', () => {
    const inStep = statusSummary(report({}, { currentFiles: 3, currentHere: 3, unrecorded: 1 }));
    expect(inStep).toBe(
      'In step: 3 current files in the archive, all here.\n' +
        '1 local file not downloaded by mission-data: its bytes not compared.\n',
    );
    expect(widest(inStep)).toBeLessThanOrEqual(80);
    const extras = statusSummary(report({ extra: 2 }, { currentFiles: 3, currentHere: 3, unrecorded: 2 }));
    expect(extras).toBe(
      'In step: 3 current files in the archive, all here.\n' +
        '2 local files not downloaded by mission-data: their bytes not compared.\n' +
        '2 extra files here, listed above; --strict counts extra files.\n',
    );
  });
});
