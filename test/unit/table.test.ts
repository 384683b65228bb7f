import { describe, expect, it } from 'vitest';
import { formatJson, formatTable } from '../../src/cli/output.js';
import type { QueryRecord } from '../../src/naming/query-records.js';

function record(index: number): QueryRecord {
  const day = String(1 + (index % 28)).padStart(2, '0');
  const name = `imap_mag_l1a_norm-mago_202501${day}_202501${day}_v01-${String(index % 100).padStart(2, '0')}.cdf`;
  return {
    file_path: `imap/mag/l1a/2025/01/${name}`,
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: `202501${day}`,
    end_date: `202501${day}`,
    version: `v01-${String(index % 100).padStart(2, '0')}`,
    extension: 'cdf',
    ingestion_date: '2025-02-01 12:00:00',
  };
}

const SIX = Array.from({ length: 6 }, (_, index) => record(index));

/** The table's lines (the trailing newline left out). */
function tableLines(text: string): string[] {
  return text.split('\n').slice(0, -1);
}

describe('table width', () => {
  it('into a pipe draws every column in full, one line per record', () => {
    const lines = tableLines(formatTable(SIX));
    expect(lines).toHaveLength(2 + SIX.length);
    expect(lines[0]).toMatch(/^Instrument {2}Data Level {2}Descriptor .*Ingestion Date {7}Filename$/);
    expect(Math.max(...lines.map((line) => line.length))).toBeGreaterThan(120);
  });

  it.each([160, 132, 100, 80, 60, 40])(
    'at %i columns fits without wrapping, keeping the file name',
    (width) => {
      const lines = tableLines(formatTable(SIX, { width }));
      expect(lines).toHaveLength(2 + SIX.length);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(width);
      expect(lines[0]).toContain('Filename');
      const names = SIX.map((item) => item.file_path.split('/').at(-1) ?? '');
      // The full name while it fits; from 60 columns down its middle gives way to an ellipsis.
      if (width >= 60) expect(lines[2]).toContain(names[0]);
      else expect(lines[2]).toMatch(/^imap_mag_l1a_.*….*_v01-00\.cdf$/);
    },
  );

  it('at 80 columns leaves out what the file name already says and keeps the ingestion day', () => {
    const lines = tableLines(formatTable(SIX, { width: 80 }));
    expect(lines[0]).toBe(
      'Version  Ingested    Filename                                           '.trimEnd(),
    );
    expect(lines[2]).toBe('v01-00   2025-02-01  imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf');
  });

  it('at 160 columns shows all eight columns', () => {
    const lines = tableLines(formatTable(SIX, { width: 160 }));
    expect(lines[0]?.split(/ {2,}/)).toEqual([
      'Instrument',
      'Data Level',
      'Descriptor',
      'Start Date',
      'End Date',
      'Version',
      'Ingestion Date',
      'Filename',
    ]);
  });

  it('draws 8,338 records within twice the time of JSON plus a margin for a busy machine', () => {
    const many = Array.from({ length: 8338 }, (_, index) => record(index));
    formatTable(many.slice(0, 100));
    formatJson(many.slice(0, 100));
    let started = performance.now();
    formatJson(many);
    const json = performance.now() - started;
    started = performance.now();
    const text = formatTable(many);
    const table = performance.now() - started;
    expect(text.split('\n')).toHaveLength(8338 + 3);
    // cli-table3 took seconds here; the bound is loose enough for a shared 2-core machine.
    expect(table).toBeLessThan(Math.max(2 * json, 20) * 10);
  });
});
