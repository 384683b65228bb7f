import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { isCalendarDate, MAX_NAME_BYTES, messages } from '../../src/naming/name-parts.js';
import {
  formatName,
  parseName,
  parsePath,
  parsePathOrName,
  parseScienceName,
} from '../../src/naming/names.js';
import { unsafePathReason } from '../../src/naming/path-safety.js';
import { queryValueProblem, unknownQueryParameterMessage } from '../../src/naming/query-params.js';
import { compareVersions } from '../../src/naming/versions.js';

const FILENAME = (name: string) =>
  `Invalid filename ${name}. Expected pattern: <mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>`;
const MISSION = 'Invalid mission. Please use imap.';
const INSTRUMENT =
  'Invalid instrument. Please choose from ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi';
const LEVEL = 'Invalid data level. Please choose from l0, l1, l1a, l1b, l1c, l1d, l2';
const START = 'Invalid start date format. Please use YYYYMMDD format.';
const END = 'Invalid end date format. Please use YYYYMMDD format.';
const VERSION = 'Invalid version format. Please use vxx-xx format.';
const EXTENSION =
  'Invalid extension. Extension should be pkts for data level l0 and cdf for data level higher than l0';

/** The problems a name is rejected with, or [] when it is valid. */
function problemsOf(name: string): readonly string[] {
  try {
    parseName(name);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).problems;
  }
}

describe('parseName: valid science names', () => {
  it('parses the example of the specification into a typed record', () => {
    expect(parseName('imap_mag_l1a_norm-magi_20240101_20240101_v01-00.cdf')).toEqual({
      kind: 'science',
      generation: 'spec',
      repointing: undefined,
      cr: undefined,
      mission: 'imap',
      instrument: 'mag',
      dataLevel: 'l1a',
      descriptor: 'norm-magi',
      startDate: '20240101',
      endDate: '20240101',
      version: 'v01-00',
      extension: 'cdf',
      name: 'imap_mag_l1a_norm-magi_20240101_20240101_v01-00.cdf',
      path: 'imap/mag/l1a/2024/01/imap_mag_l1a_norm-magi_20240101_20240101_v01-00.cdf',
    });
  });

  it('accepts l0 packets and every instrument and level', () => {
    expect(parseName('imap_swe_l0_raw_20231231_20240101_v02-11.pkts').path).toBe(
      'imap/swe/l0/2023/12/imap_swe_l0_raw_20231231_20240101_v02-11.pkts',
    );
    for (const instrument of [
      'ultra-45',
      'codice',
      'glows',
      'hit',
      'lo',
      'mag',
      'swe',
      'hi-45',
      'idex',
      'ultra-90',
      'hi-90',
      'swapi',
    ]) {
      for (const level of ['l1', 'l1a', 'l1b', 'l1c', 'l1d', 'l2']) {
        expect(problemsOf(`imap_${instrument}_${level}_sci_20240101_20240102_v01-00.cdf`)).toEqual([]);
      }
    }
  });

  it('accepts leap days in leap years only', () => {
    expect(problemsOf('imap_mag_l1a_norm_20240229_20240229_v01-00.cdf')).toEqual([]);
    expect(problemsOf('imap_mag_l1a_norm_20000229_20000229_v01-00.cdf')).toEqual([]);
    expect(problemsOf('imap_mag_l1a_norm_20230229_20240101_v01-00.cdf')).toEqual([START]);
    expect(problemsOf('imap_mag_l1a_norm_20240101_19000229_v01-00.cdf')).toEqual([END]);
  });
});

describe('parseName: names from the specification and its clients', () => {
  it.each([
    'imap_mag_l1a_norm-magi_20240101_20240101_v01-00.cdf',
    'imap_swapi_l0_raw_20250415_20250415_v01-00.pkts',
    'imap_codice_l1b_hi-omni_20240101_20240102_v02-03.cdf',
    'imap_hi-90_l1c_pset_20260101_20260101_v00-01.cdf',
    'imap_ultra-45_l2_ena-map_20240310_20240410_v99-99.cdf',
  ])('accepts %s', (name) => {
    expect(problemsOf(name)).toEqual([]);
    expect(parseName(name).kind).toBe('science');
  });

  it('reads a one-date vNNN name as a science name of today, and refuses a two-date vNNN name as the service does', () => {
    // Once refused with the expected pattern: today's archive names science files this way (ARCHIVE-TODAY §1.2).
    expect(parseName('imap_mag_l1a_norm-mago_20240101_v001.cdf')).toMatchObject({
      kind: 'science',
      generation: 'today',
      version: 'v001',
      endDate: undefined,
    });
    expect(problemsOf('imap_swe_l0_raw_20240101_20240101_v001.pkts')).toEqual([VERSION]);
  });

  it('reports a name that is not split by underscores with the expected pattern', () => {
    for (const name of ['', 'notes.txt', '.cdf', 'imap-mag-l1a-norm-20240101-20240101-v01-00.cdf']) {
      expect(problemsOf(name)).toEqual([FILENAME(name)]);
    }
  });
});

describe('parseName: each rule alone', () => {
  it.each([
    [
      'the name cannot be split',
      'imap_mag_l1a_norm_20240101_v01-00.cdf',
      [FILENAME('imap_mag_l1a_norm_20240101_v01-00.cdf')],
    ],
    [
      'there is no extension',
      'imap_mag_l1a_norm_20240101_20240101_v01-00',
      [FILENAME('imap_mag_l1a_norm_20240101_20240101_v01-00')],
    ],
    [
      'a part is empty',
      'imap_mag_l1a__20240101_20240101_v01-00.cdf',
      [FILENAME('imap_mag_l1a__20240101_20240101_v01-00.cdf')],
    ],
    [
      'there are too many parts',
      'imap_mag_l1a_norm_x_20240101_20240101_v01-00.cdf',
      [FILENAME('imap_mag_l1a_norm_x_20240101_20240101_v01-00.cdf')],
    ],
    ['the mission is wrong', 'mars_mag_l1a_norm_20240101_20240101_v01-00.cdf', [MISSION]],
    ['the instrument is unknown', 'imap_magx_l1a_norm_20240101_20240101_v01-00.cdf', [INSTRUMENT]],
    ['the data level is unknown', 'imap_mag_l3_norm_20240101_20240101_v01-00.cdf', [LEVEL]],
    ['month 13', 'imap_mag_l1a_norm_20241301_20241301_v01-00.cdf', [START, END]],
    ['day 00', 'imap_mag_l1a_norm_20240100_20240101_v01-00.cdf', [START]],
    ['February 30', 'imap_mag_l1a_norm_20240101_20240230_v01-00.cdf', [END]],
    ['a dashed date', 'imap_mag_l1a_norm_2024-01-01_20240101_v01-00.cdf', [START]],
    ['a short version', 'imap_mag_l1a_norm_20240101_20240101_v1-0.cdf', [VERSION]],
    ['a vNNN version', 'imap_mag_l1a_norm_20240101_20240101_v001.cdf', [VERSION]],
    ['l0 with cdf', 'imap_mag_l0_raw_20240101_20240101_v01-00.cdf', [EXTENSION]],
    ['l1a with pkts', 'imap_mag_l1a_norm_20240101_20240101_v01-00.pkts', [EXTENSION]],
    ['an unknown extension', 'imap_mag_l1a_norm_20240101_20240101_v01-00.txt', [EXTENSION]],
  ])('rejects a name when %s', (_why, name, expected) => {
    expect(problemsOf(name)).toEqual(expected);
  });

  it('uses the exact wording of the service', () => {
    expect(messages.mission).toBe(MISSION);
    expect(messages.instrument).toBe(INSTRUMENT);
    expect(messages.dataLevel).toBe(LEVEL);
    expect(messages.extension).toBe(EXTENSION);
  });
});

describe('parseName: several rules together', () => {
  it('lists every broken rule, one per line, in the documented order', () => {
    const name = 'mars_foo_l9_norm_20241340_2024011_v1.txt';
    expect(problemsOf(name)).toEqual([MISSION, INSTRUMENT, LEVEL, START, END, VERSION, EXTENSION]);
    const error = (() => {
      try {
        parseName(name);
      } catch (caught) {
        return caught as ValidationError;
      }
      throw new Error('expected a ValidationError');
    })();
    expect(error.message).toBe([MISSION, INSTRUMENT, LEVEL, START, END, VERSION, EXTENSION].join('\n'));
    expect(error.exitCode).toBe(2);
    expect(error.code).toBe('E_VALIDATION');
  });

  it('lists exactly the broken rules, in order, for each of the 127 combinations', () => {
    const rules = [
      { message: MISSION, good: 'imap', bad: 'mars' },
      { message: INSTRUMENT, good: 'mag', bad: 'magx' },
      { message: LEVEL, good: 'l1a', bad: 'l9' },
      { message: START, good: '20240229', bad: '20241301' },
      { message: END, good: '20240301', bad: '20240230' },
      { message: VERSION, good: 'v01-00', bad: 'v1-00' },
      { message: EXTENSION, good: 'cdf', bad: 'txt' },
    ];
    for (let broken = 1; broken < 2 ** rules.length; broken += 1) {
      const part = (index: number) => {
        const rule = rules[index] as (typeof rules)[number];
        return broken & (1 << index) ? rule.bad : rule.good;
      };
      const name = `${part(0)}_${part(1)}_${part(2)}_norm_${part(3)}_${part(4)}_${part(5)}.${part(6)}`;
      const expected = rules.filter((_rule, index) => broken & (1 << index)).map((rule) => rule.message);
      expect(problemsOf(name), name).toEqual(expected);
    }
  });

  it('keeps the order whatever the combination', () => {
    expect(problemsOf('imap_hit_l2_x_20240101_20240199_v01-0a.pkts')).toEqual([END, VERSION, EXTENSION]);
    expect(problemsOf('imap_nope_l1b_x_20240101_20240101_v01-00.cdf')).toEqual([INSTRUMENT]);
    expect(problemsOf('xmap_nope_l1b_x_00000000_20240101_v01-00.cdf')).toEqual([MISSION, INSTRUMENT, START]);
  });
});

describe('ancillary names', () => {
  it('parses names with one and with two dates', () => {
    expect(parseName('imap_mag_calibration_20240101_20240131_v01-02.csv')).toMatchObject({
      kind: 'ancillary',
      instrument: 'mag',
      descriptor: 'calibration',
      startDate: '20240101',
      endDate: '20240131',
      version: 'v01-02',
      extension: 'csv',
      path: 'imap/ancillary/mag/imap_mag_calibration_20240101_20240131_v01-02.csv',
    });
    expect(parseName('imap_swe_lut_20240101_v02-00.json')).toMatchObject({
      kind: 'ancillary',
      endDate: undefined,
    });
  });

  it('lists broken ancillary rules', () => {
    expect(problemsOf('imap_mag_calibration_20240132_v01-00.exe')).toEqual([
      START,
      messages.ancillaryExtension,
    ]);
    expect(problemsOf('mars_mag_calibration_20240101_v1.csv')).toEqual([MISSION, VERSION]);
  });

  it('reads a name with a data level, known or not, as a science name', () => {
    for (const name of [
      'imap_mag_l1a_20240101_20240101_v01-00.cdf',
      'imap_mag_l3_norm_20240101_v01-00.cdf',
      'imap_mag_l2_norm_20240101_v01-00.cdf',
      'imap_mag_l1e_norm_20240101_v01-00.cdf',
    ]) {
      expect(problemsOf(name)).toEqual([FILENAME(name)]);
    }
    expect(parseName('imap_mag_l1-lut_20240101_v01-00.csv').kind).toBe('ancillary');
    expect(parseName('imap_mag_l10_20240101_v01-00.csv').kind).toBe('ancillary');
    expect(() => parseScienceName('imap_mag_calibration_20240101_20240131_v01-02.csv')).toThrow(
      ValidationError,
    );
  });
});

describe('parsePath', () => {
  const name = 'imap_mag_l1a_norm_20240105_20240106_v01-00.cdf';

  it('accepts the layout that agrees with the name', () => {
    expect(parsePath(`imap/mag/l1a/2024/01/${name}`).name).toBe(name);
    expect(parsePath('imap/ancillary/mag/imap_mag_calibration_20240101_v01-00.csv').kind).toBe('ancillary');
  });

  it.each([
    ['another instrument folder', `imap/swe/l1a/2024/01/${name}`],
    ['another level folder', `imap/mag/l1b/2024/01/${name}`],
    ['another year', `imap/mag/l1a/2023/01/${name}`],
    ['another month', `imap/mag/l1a/2024/1/${name}`],
    ['a missing folder', `imap/mag/l1a/2024/${name}`],
    ['an extra folder', `data/imap/mag/l1a/2024/01/${name}`],
  ])('rejects %s, naming the expected path', (_why, path) => {
    expect(() => parsePath(path)).toThrow(`expected imap/mag/l1a/2024/01/${name}`);
  });

  it.each([
    [
      'mission',
      `IMAP/mag/l1a/2024/01/${name}`,
      `the mission folder is "IMAP" but the name's mission is imap`,
    ],
    [
      'instrument',
      `imap/swe/l1a/2024/01/${name}`,
      `the instrument folder is "swe" but the name's instrument is mag`,
    ],
    [
      'data level',
      `imap/mag/l1b/2024/01/${name}`,
      `the data level folder is "l1b" but the name's data level is l1a`,
    ],
    [
      'year',
      `imap/mag/l1a/2023/01/${name}`,
      `the year folder is "2023" but the name's start date is in 2024`,
    ],
    [
      'month',
      `imap/mag/l1a/2024/02/${name}`,
      `the month folder is "02" but the name's start date is in month 01`,
    ],
    [
      'folder count',
      `imap/mag/l1a/2024/${name}`,
      'it has 4 folders above the file name where 5 folders belong',
    ],
  ])('says which part disagrees with the name: %s', (_part, path, reason) => {
    expect(() => parsePath(path)).toThrow(
      `Invalid path ${path}: ${reason}; expected imap/mag/l1a/2024/01/${name}`,
    );
  });

  it('takes year and month from the start date, not the end date', () => {
    const spanning = 'imap_hit_l2_sci_20241231_20250101_v01-00.cdf';
    expect(parsePath(`imap/hit/l2/2024/12/${spanning}`).name).toBe(spanning);
    expect(() => parsePath(`imap/hit/l2/2025/01/${spanning}`)).toThrow(
      'the year folder is "2025" but the name\'s start date is in 2024, and the month folder is "01"',
    );
  });

  it('holds ancillary files at imap/ancillary/<instrument>/<filename> only', () => {
    const ancillary = 'imap_mag_calibration_20240101_v01-00.csv';
    expect(parsePath(`imap/ancillary/mag/${ancillary}`).name).toBe(ancillary);
    expect(() => parsePath(`imap/ancillary/swe/${ancillary}`)).toThrow(
      `the instrument folder is "swe" but the name's instrument is mag; expected imap/ancillary/mag/${ancillary}`,
    );
    expect(() => parsePath(`imap/mag/ancillary/${ancillary}`)).toThrow(
      'the second folder is "mag" but ancillary files live under ancillary',
    );
    expect(() => parsePath(`imap/mag/l1a/2024/01/${ancillary}`)).toThrow(
      '(<mission>/ancillary/<instrument>/<filename>)',
    );
    expect(() => parsePath(`imap/ancillary/mag/${name}`)).toThrow(`expected imap/mag/l1a/2024/01/${name}`);
  });

  it.each([
    ['absolute', `/imap/mag/l1a/2024/01/${name}`, 'absolute'],
    ['a drive letter', `C:/imap/${name}`, 'absolute'],
    ['..', `imap/mag/../mag/l1a/2024/01/${name}`, "'..'"],
    ['.', `imap/./mag/l1a/2024/01/${name}`, "'.'"],
    ['an empty segment', `imap//mag/l1a/2024/01/${name}`, 'empty segment'],
    ['a trailing slash', 'imap/mag/l1a/2024/01/', 'empty segment'],
    ['a backslash', `imap\\mag\\l1a\\2024\\01\\${name}`, 'backslash'],
    ['NUL', `imap/mag/l1a/2024/01/${name}\u0000.cdf`, 'NUL'],
    ['a control character', `imap/mag/l1a/2024/01/\u001b${name}`, 'control character'],
    ['a C1 control character', `imap/mag/l1a/2024/01/${name}\u0085`, 'control character'],
    ['%2e%2e', `imap/%2e%2e/mag/l1a/2024/01/${name}`, "a '..' segment once percent-decoded"],
    ['%2E%2E', `imap/%2E%2E/mag/l1a/2024/01/${name}`, "a '..' segment once percent-decoded"],
    ['.%2e', `imap/.%2e/mag/l1a/2024/01/${name}`, "a '..' segment once percent-decoded"],
    ['%2e', `imap/%2e/mag/l1a/2024/01/${name}`, "a '.' segment once percent-decoded"],
    ['a leading %2f', `%2fimap/mag/l1a/2024/01/${name}`, 'absolute once percent-decoded'],
    ['%2f%2f', `imap/mag%2f%2fl1a/2024/01/${name}`, 'an empty segment'],
    ['%2f', `imap%2fmag/l1a/2024/01/${name}`, "percent-encoded '/'"],
    ['%5c', `imap%5cmag/l1a/2024/01/${name}`, 'a backslash'],
    ['%00', `imap/mag/l1a/2024/01/${name}%00`, 'a NUL character once percent-decoded'],
    ['%0a', `imap/mag/l1a/2024/01/${name}%0a`, 'a control character once percent-decoded'],
    ['%c2%85', `imap/mag/l1a/2024/01/${name}%c2%85`, 'a control character once percent-decoded'],
    ['double encoding', `imap/%252e%252e/${name}`, "a '..' segment once percent-decoded"],
    ['a plain %', `imap/mag/l1a/2024/01/100%${name}`, "'%' in the segment \"100%"],
    ['a ..; segment', `imap/..;/..;/outside/${name}`, 'its segment "..;" starts with a dot'],
    ['a ... segment', `imap/.../mag/${name}`, 'its segment "..." starts with a dot'],
    ['a hidden folder', `imap/.checksums/mag/${name}`, 'its segment ".checksums" starts with a dot'],
    ['a control character, named by segment', `imap/ma\u0007g/${name}`, 'in the segment "ma\\u0007g"'],
    [
      'an empty segment, placed',
      `imap/mag//l1a/${name}`,
      "empty segment ('//' or a trailing '/') after \"imap/mag\"",
    ],
  ])('rejects a path with %s, saying what is wrong', (_why, path, reason) => {
    const error = (() => {
      try {
        parsePath(path);
      } catch (caught) {
        return caught;
      }
      throw new Error(`expected ${JSON.stringify(path)} to be rejected`);
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems).toHaveLength(1);
    expect((error as ValidationError).message).toContain(`Invalid path ${JSON.stringify(path)}: `);
    expect((error as ValidationError).message).toContain(reason);
  });

  it('parsePathOrName accepts both forms and rejects unsafe bare names', () => {
    expect(parsePathOrName(name).path).toBe(`imap/mag/l1a/2024/01/${name}`);
    expect(parsePathOrName(`imap/mag/l1a/2024/01/${name}`).name).toBe(name);
    expect(() => parsePathOrName('..')).toThrow("'..'");
    expect(() => parsePathOrName(`${name}\u0000`)).toThrow('NUL');
  });

  it('unsafePathReason is undefined for a safe relative path', () => {
    expect(unsafePathReason(`imap/mag/l1a/2024/01/${name}`)).toBeUndefined();
    expect(unsafePathReason('')).toBe('it is empty');
  });
});

describe('dates and versions', () => {
  it.each([
    ['20240229', true],
    ['20230229', false],
    ['21000229', false],
    ['20000229', true],
    ['20241301', false],
    ['20240001', false],
    ['20240100', false],
    ['20240131', true],
    ['20240431', false],
    ['2024011', false],
    ['2024O101', false],
    ['20240230', false],
    ['20240301', true],
    ['19000229', false],
    ['20240631', false],
    ['20241231', true],
    ['20241232', false],
    ['00000101', false],
    ['00010101', true],
    ['00040229', true],
    ['202401010', false],
    ['２０２４0101', false],
    ['2024/101', false],
    ['2024:101', false],
    ['-2024010', false],
    ['20240229', true],
    ['21000229', false],
    ['20000229', true],
    ['99991231', true],
  ])('isCalendarDate(%s) is %s', (value, expected) => {
    expect(isCalendarDate(value)).toBe(expected);
  });

  it('compares versions numerically', () => {
    const sorted = ['v10-00', 'v02-10', 'v02-09', 'v01-00', 'v02-01', 'v09-99'].sort(compareVersions);
    expect(sorted).toEqual(['v01-00', 'v02-01', 'v02-09', 'v02-10', 'v09-99', 'v10-00']);
    expect(compareVersions('v01-10', 'v01-09')).toBeGreaterThan(0);
    expect(compareVersions('v02-00', 'v10-00')).toBeLessThan(0);
    expect(compareVersions('v01-00', 'v01-00')).toBe(0);
    expect(() => compareVersions('1.0', 'v01-00')).toThrow(ValidationError);
  });
});

describe('formatName', () => {
  it('rebuilds the name of a parsed record', () => {
    for (const name of [
      'imap_codice_l0_raw_20240101_20240102_v01-00.pkts',
      'imap_hi-45_l1c_sci-90_20251231_20260101_v12-34.cdf',
      'imap_glows_map_20240101_v01-00.dat',
    ]) {
      expect(formatName(parseName(name))).toBe(name);
    }
  });
});

describe('query values', () => {
  it('names the parameter and lists the valid ones for an unknown parameter', () => {
    // The specification's list first, then the parameters today's service added.
    expect(unknownQueryParameterMessage('colour')).toMatch(
      /^colour is not a valid query parameter\. Valid query parameters are: file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, table, ingestion_start_date, ingestion_end_date, .*repointing/,
    );
  });

  it('says what is wrong with each kind of value', () => {
    expect(queryValueProblem('instrument', 'mag')).toBeUndefined();
    // The specification's words where its service is played; a client checks against both generations'.
    expect(queryValueProblem('instrument', 'magx', 'science', 'spec')).toBe(INSTRUMENT);
    expect(queryValueProblem('data_level', 'l9', 'science', 'spec')).toBe(LEVEL);
    expect(queryValueProblem('instrument', 'hi')).toBeUndefined();
    expect(queryValueProblem('instrument', 'hi', 'science', 'spec')).toBe(INSTRUMENT);
    expect(queryValueProblem('start_date', '2024-01-01')).toBe(
      'Invalid start_date "2024-01-01". Please use YYYYMMDD format.',
    );
    expect(queryValueProblem('ingestion_end_date', '20240230')).toContain('ingestion_end_date');
    expect(queryValueProblem('version', 'latest')).toBeUndefined();
    expect(queryValueProblem('version', 'v1', 'science', 'spec')).toContain('vxx-xx format or latest');
    expect(queryValueProblem('version', 'v001')).toBeUndefined();
    expect(queryValueProblem('version', 'v1')).toContain('vNNN.NNNN, vNNN or vxx-xx');
    expect(queryValueProblem('extension', 'csv')).toContain('pkts, cdf');
    expect(queryValueProblem('extension', 'csv', 'ancillary')).toBeUndefined();
    expect(queryValueProblem('table', 'other')).toContain('science, ancillary');
    expect(queryValueProblem('file_path', '../etc/passwd')).toContain("'..'");
    expect(queryValueProblem('descriptor', 'a b')).toContain('descriptor');
  });
});

describe('name length', () => {
  const nameWith = (descriptor: string) => `imap_mag_l1a_${descriptor}_20240101_20240101_v01-00.cdf`;
  const fixed = nameWith('').length;

  it('accepts a name of exactly the longest length and refuses one byte more, with one clear message', () => {
    const longest = nameWith('d'.repeat(MAX_NAME_BYTES - fixed));
    expect(longest).toHaveLength(MAX_NAME_BYTES);
    expect(parseName(longest).name).toBe(longest);
    const tooLong = nameWith('d'.repeat(MAX_NAME_BYTES - fixed + 1));
    expect(() => parseName(tooLong)).toThrow(ValidationError);
    try {
      parseName(tooLong);
    } catch (error) {
      expect((error as ValidationError).problems).toEqual([
        `Invalid filename ${tooLong.slice(0, 60)}…: it is ${MAX_NAME_BYTES + 1} bytes long; file names are at most ${MAX_NAME_BYTES} bytes.`,
      ]);
    }
  });

  it('refuses a 10,000-character name in paths too, before any other rule', () => {
    const huge = nameWith('x'.repeat(10_000));
    expect(() => parsePath(`imap/mag/l1a/2024/01/${huge}`)).toThrow(/file names are at most 231 bytes/);
    expect(() => parseName(`${'?'.repeat(300)}.cdf`)).toThrow(/file names are at most/);
  });
});
