/**
 * How `query` prints today's records: the Repointing and CR columns when a record has one, no End Date column for
 * today's science (whose records have none), SPICE kernels by type, coverage, version and ingestion, and CSV
 * carrying every field of every record, mixed or not.
 */
import { describe, expect, it } from 'vitest';
import { csvColumns, formatCsv, formatJson, formatTable, parseCsv } from '../../src/cli/output.js';
import type { QueryRecord, SpiceRecord } from '../../src/naming/query-records.js';
import { REPOINTED_RECORD } from '../helpers/records.js';

const REPOINTED: QueryRecord = { ...REPOINTED_RECORD, ingestion_date: '2025-01-02 03:04:05' };
const ROTATION: QueryRecord = {
  ...REPOINTED,
  file_path: 'imap/glows/l3a/2025/01/imap_glows_l3a_hist_20250105-cr02291_v001.0000.cdf',
  instrument: 'glows',
  data_level: 'l3a',
  descriptor: 'hist',
  start_date: '20250105',
  repointing: null,
  cr: 2291,
  version: 'v001.0000',
  major_version: 1,
  minor_version: 0,
};
const PLAIN: QueryRecord = {
  ...REPOINTED,
  file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250101_v001.0002.cdf',
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm',
  repointing: null,
  cr: null,
  version: 'v001.0002',
  major_version: 1,
  minor_version: 2,
};
const SPEC: QueryRecord = {
  file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250102_v01-00.cdf',
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm-mago',
  start_date: '20250101',
  end_date: '20250102',
  version: 'v01-00',
  extension: 'cdf',
  ingestion_date: '2025-01-03 04:05:06',
};
const LEAPSECONDS: SpiceRecord = {
  file_path: 'imap/spice/lsk/naif0012.tls',
  file_name: 'naif0012.tls',
  kernel_type: 'leapseconds',
  min_date_datetime: null,
  max_date_datetime: null,
  ingestion_date: '2025-01-02 03:04:05',
  version: '0012',
};
const PREDICTED: SpiceRecord = {
  file_path: 'imap/spice/spk/imap_pred_od004_20251002_20251113_v01.bsp',
  file_name: 'imap_pred_od004_20251002_20251113_v01.bsp',
  kernel_type: 'ephemeris_predicted',
  min_date_datetime: '2025-10-02T00:00:00',
  max_date_datetime: '2025-11-13T23:59:59',
  version: 1,
};

const header = (table: string) => (table.split('\n')[0] ?? '').split(/\s{2,}/);

describe("the table of today's science", () => {
  it('shows Repointing and CR when a record has them, and no End Date when no record carries one', () => {
    const table = formatTable([REPOINTED, ROTATION, PLAIN]);
    expect(header(table)).toEqual([
      'Instrument',
      'Data Level',
      'Descriptor',
      'Start Date',
      'Repointing',
      'CR',
      'Version',
      'Ingestion Date',
      'Filename',
    ]);
    const lines = table.split('\n');
    expect(lines[2]).toMatch(
      /^hi\s+l1b\s+45sensor-de\s+20250101\s+12\s+v002\.0001\s+2025-01-02 03:04:05\s+imap_hi_/,
    );
    expect(lines[3]).toMatch(/^glows\s+l3a\s+hist\s+20250105\s+2291\s+v001\.0000\s+/);
    expect(table).not.toMatch(/null|undefined/);
  });

  it('leaves out the column no record fills', () => {
    expect(header(formatTable([REPOINTED, PLAIN]))).not.toContain('CR');
    expect(header(formatTable([ROTATION, PLAIN]))).not.toContain('Repointing');
    expect(header(formatTable([PLAIN]))).toEqual([
      'Instrument',
      'Data Level',
      'Descriptor',
      'Start Date',
      'Version',
      'Ingestion Date',
      'Filename',
    ]);
  });

  it("keeps End Date beside today's records when a specification's record carries it", () => {
    expect(header(formatTable([SPEC, REPOINTED]))).toEqual([
      'Instrument',
      'Data Level',
      'Descriptor',
      'Start Date',
      'Repointing',
      'End Date',
      'Version',
      'Ingestion Date',
      'Filename',
    ]);
  });

  it('drops the numbers before the file name on a narrow terminal', () => {
    const table = formatTable([REPOINTED, ROTATION], { width: 100 });
    expect(table.split('\n').every((line) => line.length <= 100)).toBe(true);
    expect(table).toContain('imap_hi_l1b_45sensor-de_20250101-repoint00012_v002.0001.cdf');
  });
});

describe('the table of SPICE kernels', () => {
  it('shows type, coverage, version, ingestion and the file name', () => {
    const table = formatTable([LEAPSECONDS, PREDICTED]);
    expect(table).toBe(
      [
        'Kernel Type          Coverage Start       Coverage End         Version  Ingestion Date       Filename',
        '-------------------  -------------------  -------------------  -------  -------------------  -----------------------------------------',
        'leapseconds                                                    0012     2025-01-02 03:04:05  naif0012.tls',
        'ephemeris_predicted  2025-10-02T00:00:00  2025-11-13T23:59:59  1                             imap_pred_od004_20251002_20251113_v01.bsp',
        '',
      ].join('\n'),
    );
  });

  it('shows the coverage days alone, then less, on narrower terminals', () => {
    const narrow = formatTable([LEAPSECONDS, PREDICTED], { width: 120 });
    expect(header(narrow)).toEqual([
      'Kernel Type',
      'Coverage Start',
      'Coverage End',
      'Version',
      'Ingested',
      'Filename',
    ]);
    expect(narrow).toContain('2025-10-02      2025-11-13');
    expect(header(formatTable([PREDICTED], { width: 90 }))).toEqual([
      'Kernel Type',
      'Version',
      'Ingested',
      'Filename',
    ]);
    expect(header(formatTable([PREDICTED], { width: 70 }))).toEqual(['Kernel Type', 'Filename']);
  });
});

describe('JSON and CSV carry every field', () => {
  it("CSV of today's science adds the numbers after the usual fields", () => {
    const rows = parseCsv(formatCsv([REPOINTED, ROTATION]));
    expect(rows[0]).toEqual([
      'file_path',
      'instrument',
      'data_level',
      'descriptor',
      'start_date',
      'end_date',
      'version',
      'extension',
      'ingestion_date',
      'repointing',
      'cr',
      'major_version',
      'minor_version',
    ]);
    expect(rows[1]?.slice(-4)).toEqual(['12', '', '2', '1']);
    expect(rows[2]?.slice(-4)).toEqual(['', '2291', '1', '0']);
  });

  it('CSV of SPICE kernels leads with their own fields, the storage path last', () => {
    const rows = parseCsv(formatCsv([LEAPSECONDS, PREDICTED]));
    expect(rows).toEqual([
      [
        'file_name',
        'kernel_type',
        'min_date_datetime',
        'max_date_datetime',
        'version',
        'ingestion_date',
        'file_path',
      ],
      ['naif0012.tls', 'leapseconds', '', '', '0012', '2025-01-02 03:04:05', 'imap/spice/lsk/naif0012.tls'],
      [
        PREDICTED.file_name,
        'ephemeris_predicted',
        '2025-10-02T00:00:00',
        '2025-11-13T23:59:59',
        '1',
        '',
        PREDICTED.file_path,
      ],
    ]);
  });

  it('CSV of mixed records has a column for every field any of them has, and extra fields too', () => {
    const extra = { ...SPEC, checksum: 'abc' } as QueryRecord;
    const records = [extra, REPOINTED, LEAPSECONDS];
    const columns = csvColumns(records);
    for (const record of records) {
      for (const field of Object.keys(record)) expect(columns).toContain(field);
    }
    const rows = parseCsv(formatCsv(records));
    expect(rows.every((row) => row.length === columns.length)).toBe(true);
    const at = (row: number, field: string) => rows[row]?.[columns.indexOf(field)];
    expect(at(1, 'checksum')).toBe('abc');
    expect(at(2, 'repointing')).toBe('12');
    expect(at(3, 'kernel_type')).toBe('leapseconds');
    expect(at(3, 'file_name')).toBe('naif0012.tls');
  });

  it('JSON is every record as received', () => {
    const records = [SPEC, REPOINTED, LEAPSECONDS];
    expect(JSON.parse(formatJson(records))).toEqual(records);
  });
});
