import { describe, expect, it } from 'vitest';
import { csvField, formatCsv, formatJson, formatTable, foundLine } from '../../src/cli/output.js';
import type { QueryRecord } from '../../src/naming/query-records.js';

const MAG: QueryRecord = {
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
const ANCILLARY: QueryRecord = {
  file_path: 'imap/ancillary/mag/imap_mag_calibration_20250101_v02-01.json',
  instrument: 'mag',
  descriptor: 'calibration',
  start_date: '20250101',
  end_date: null,
  version: 'v02-01',
  extension: 'json',
};

describe('table', () => {
  it('shows control characters a server sent as escapes, never raw', () => {
    const text = formatTable([{ ...MAG, descriptor: 'x\u001b]0;owned\u0007y', version: 'v01-00\u009b2J' }]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character but the line feed may remain
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('x\\u001b]0;owned\\u0007y');
    expect(text).toContain('v01-00\\u009b2J');
  });

  it('prints a compact table with the eight columns, no rule between rows (the count line is apart)', () => {
    expect(formatTable([MAG, ANCILLARY])).toBe(
      [
        'Instrument  Data Level  Descriptor   Start Date  End Date  Version  Ingestion Date       Filename',
        '----------  ----------  -----------  ----------  --------  -------  -------------------  ---------------------------------------------------',
        'mag         l1a         norm-mago    20250101    20250102  v01-00   2025-01-03 04:05:06  imap_mag_l1a_norm-mago_20250101_20250102_v01-00.cdf',
        'mag                     calibration  20250101              v02-01                        imap_mag_calibration_20250101_v02-01.json',
        '',
      ].join('\n'),
    );
  });

  it('has no colour codes', () => {
    expect(formatTable([MAG])).not.toContain('\u001b[');
  });

  it('prints nothing when nothing matched; the count line is foundLine', () => {
    expect(formatTable([])).toBe('');
    expect(foundLine(0)).toBe('Found [0] matching files\n');
  });
});

describe('json', () => {
  it('prints a JSON array of the records as received, extra fields and key order kept', () => {
    const received = [{ extra: 1, ...MAG }, ANCILLARY] as QueryRecord[];
    const text = formatJson(received);
    expect(JSON.parse(text)).toEqual(received);
    expect(Object.keys(JSON.parse(text)[0])).toEqual(Object.keys(received[0] as object));
    expect(text.endsWith(']\n')).toBe(true);
  });

  it('prints [] when nothing matched', () => {
    expect(formatJson([])).toBe('[]\n');
  });
});

describe('csv', () => {
  const HEADER =
    'file_path,instrument,data_level,descriptor,start_date,end_date,version,extension,ingestion_date';

  it('prints a header row and one row per record, LF line ends', () => {
    expect(formatCsv([MAG, ANCILLARY])).toBe(
      `${HEADER}\n` +
        'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250102_v01-00.cdf,mag,l1a,norm-mago,20250101,20250102,v01-00,cdf,2025-01-03 04:05:06\n' +
        'imap/ancillary/mag/imap_mag_calibration_20250101_v02-01.json,mag,,calibration,20250101,,v02-01,json,\n',
    );
  });

  it('prints the header alone when nothing matched', () => {
    expect(formatCsv([])).toBe(`${HEADER}\n`);
  });

  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rhere', '"cr\rhere"'],
    ['', ''],
  ])('escapes %j as %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('quotes descriptors a hostile server might send', () => {
    const text = formatCsv([{ ...MAG, descriptor: 'x,"y"\r\nz' }]);
    expect(text).toBe(
      `${HEADER}\n` +
        'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250102_v01-00.cdf,mag,l1a,"x,""y""\r\nz",20250101,20250102,v01-00,cdf,2025-01-03 04:05:06\n',
    );
  });
});
