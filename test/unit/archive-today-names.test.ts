/**
 * The names of ARCHIVE-TODAY §5, every one: the valid names of §5.1 with their kind, generation and storage path;
 * the invalid names of §5.2 refused with the specification's exact messages (SPEC §7) and today's reason as a
 * hint; the case rules of §1.4; the ambiguities of §4.2, resolved in the sheet's order of kinds.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { messages } from '../../src/naming/name-parts.js';
import { type MissionFile, nameWarning, parseName, parsePath } from '../../src/naming/names.js';
import { readSpiceName } from '../../src/naming/spice.js';

const FILENAME = (name: string) => messages.filename(name);
const {
  instrument: INSTRUMENT,
  startDate: START,
  endDate: END,
  version: VERSION,
  ancillaryExtension: ANCILLARY_EXTENSION,
} = messages;

/** The error a name is refused with; fails the test when the name is accepted. */
function refusal(name: string): ValidationError {
  try {
    parseName(name);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error(`expected ${JSON.stringify(name)} to be refused`);
}

/** §5.1: name, kind, storage path, and the parts that matter. */
const VALID: ReadonlyArray<[string, MissionFile['kind'], string, Record<string, unknown>?]> = [
  [
    'imap_mag_l1a_burst_20210101_v001.0001.cdf',
    'science',
    'imap/mag/l1a/2021/01',
    { instrument: 'mag', dataLevel: 'l1a', descriptor: 'burst', startDate: '20210101', version: 'v001.0001' },
  ],
  [
    'imap_mag_l0_raw_20210101-repoint00001_v000.0001.pkts',
    'science',
    'imap/mag/l0/2021/01',
    { repointing: 1, cr: undefined, startDate: '20210101', extension: 'pkts' },
  ],
  [
    'imap_glows_l3a_test_20210101-cr00023_v000.0001.cdf',
    'science',
    'imap/glows/l3a/2021/01',
    { repointing: undefined, cr: 23, dataLevel: 'l3a' },
  ],
  [
    'imap_mag_l1a_burst-1min_20210101_v001.0001.pkts',
    'science',
    'imap/mag/l1a/2021/01',
    { descriptor: 'burst-1min', extension: 'pkts' },
  ],
  [
    'imap_l1const_l2_common_20251102_v001.0008.cdf',
    'science',
    'imap/l1const/l2/2025/11',
    { instrument: 'l1const' },
  ],
  ['imap_swe_l1_test-description_20100101_v000.0001.cdf', 'science', 'imap/swe/l1/2010/01'],
  ['imap_mag_l0_raw_20210101_v001.pkts', 'science', 'imap/mag/l0/2021/01', { version: 'v001' }],
  [
    'imap_ultra_l1cb_spin_20250105_v002.0013.cdf',
    'science',
    'imap/ultra/l1cb/2025/01',
    { instrument: 'ultra', dataLevel: 'l1cb' },
  ],
  [
    'imap_mag_test_20210101_20210102_v001.cdf',
    'ancillary',
    'imap/ancillary/mag',
    { descriptor: 'test', startDate: '20210101', endDate: '20210102', version: 'v001' },
  ],
  ['imap_mag_test_20210101_v001.json', 'ancillary', 'imap/ancillary/mag', { endDate: undefined }],
  [
    'imap_mag_l1a_test_20210101-repoint00001_v001.0001.png',
    'quicklook',
    'imap/quicklook/mag/l1a/2021/01',
    { repointing: 1, extension: 'png' },
  ],
  ['imap_mag_l1a_test_20210101_v000.0001.json', 'dependency', 'imap/dependency/mag/l1a/2021/01'],
  [
    'imap_mag_withhold-data-release-001_20260201_20260430_v001.txt',
    'release',
    'imap/release/mag',
    { descriptor: 'withhold-data-release-001', startDate: '20260201', endDate: '20260430' },
  ],
  ['imap_1000_100_1000_100_01.ap.bc', 'spice', 'imap/spice/ck', { kernelType: 'attitude_predict' }],
  [
    'imap_dps_2025_121_2025_202_07.ah.bc',
    'spice',
    'imap/spice/ck',
    { kernelType: 'pointing_attitude', startDate: '20250501', endDate: '20250721', version: '07' },
  ],
  ['imap_2025_122_2025_122_01.spin.csv', 'spice', 'imap/spice/spin', { kernelType: 'spin' }],
  ['imap_2025_122_01.repoint', 'spice', 'imap/spice/repoint', { kernelType: 'repoint' }],
  [
    'imap_pred_od004_20251002_20251113_v01.bsp',
    'spice',
    'imap/spice/spk',
    { kernelType: 'ephemeris_predicted', startDate: '20251002', endDate: '20251113', version: '01' },
  ],
  [
    'naif0012.tls',
    'spice',
    'imap/spice/lsk',
    { kernelType: 'leapseconds', version: '0012', startDate: undefined },
  ],
  ['imap_sclk_0012.tsc', 'spice', 'imap/spice/sclk', { kernelType: 'spacecraft_clock' }],
  ['imap_science_0001.tf', 'spice', 'imap/spice/fk', { kernelType: 'science_frames' }],
  [
    'imap_sdc_metakernel_2025_v100.tm',
    'spice',
    'imap/spice/mk',
    { kernelType: 'metakernel', version: '100' },
  ],
  ['imap_2026_267_2026_267_hist_02.sff', 'spice', 'imap/spice/activities', { kernelType: 'thruster' }],
  [
    'earth_000101_251112_250817.bpc',
    'spice',
    'imap/spice/pck',
    { kernelType: 'earth_attitude', startDate: '20000101', endDate: '20251112' },
  ],
  ['L1_de431.bsp', 'spice', 'imap/spice/spk', { kernelType: 'lagrange_point' }],
  ['de440.bsp', 'spice', 'imap/spice/spk', { kernelType: 'planetary_ephemeris' }],
  ['pck00010.tpc', 'spice', 'imap/spice/pck', { kernelType: 'planetary_constants' }],
];

describe('ARCHIVE-TODAY §5.1: valid names of today', () => {
  it.each(VALID)('%s is a %s file at %s/', (name, kind, folder, parts) => {
    const file = parseName(name);
    expect(file).toMatchObject({ kind, generation: 'today', name, path: `${folder}/${name}`, ...parts });
    expect(parsePath(file.path)).toEqual(file);
    expect(nameWarning(file)).toBeUndefined();
  });

  it("reads a legacy minor-only science version as today's (§5.2 #11: valid, refused only at upload)", () => {
    expect(parseName('imap_mag_l1a_test_20240101_v001.cdf')).toMatchObject({
      kind: 'science',
      generation: 'today',
      version: 'v001',
      path: 'imap/mag/l1a/2024/01/imap_mag_l1a_test_20240101_v001.cdf',
    });
  });

  it("reads §5.2 #12, a name of the specification's form, as the specification's science", () => {
    const name = 'imap_mag_l1a_burst_20240105_20240106_v01-02.cdf';
    expect(parseName(name)).toMatchObject({
      kind: 'science',
      generation: 'spec',
      startDate: '20240105',
      endDate: '20240106',
      version: 'v01-02',
      path: `imap/mag/l1a/2024/01/${name}`,
    });
  });
});

/** §5.2: each invalid name, the specification's messages it gets, and what the hint says of today's reading. */
const INVALID: ReadonlyArray<[string, string, readonly string[] | 'filename', string | undefined]> = [
  [
    '#1 no descriptor',
    'imap_mag_l1a_20210101_v001.0001.cdf',
    'filename',
    "Names of today's archive are read too",
  ],
  [
    '#2 no extension',
    'imap_mag_l1a_burst_20210101_v001.0001',
    'filename',
    'the extension "0001" is not one of a science file\'s (cdf, pkts)',
  ],
  [
    '#3 extension abc',
    'imap_mag_l1a_burst_20210101_v001.0001.abc',
    'filename',
    'the extension "abc" is not one of a science file\'s',
  ],
  [
    '#4 instrument sdc',
    'imap_sdc_l1a_burst_20210101_v001.0001.cdf',
    'filename',
    '"sdc" is not an instrument of today\'s archive',
  ],
  ['#5 a 4-digit repointing', 'imap_mag_l1a_burst_20210101-repoint0001_v001.0001.cdf', 'filename', undefined],
  [
    '#6 day of year 410',
    'imap_2025_032_2025_410_003.ah.bc',
    [INSTRUMENT, START, END, VERSION, ANCILLARY_EXTENSION],
    '2025_410 is no day of its year',
  ],
  [
    '#7 month 13',
    'imap_90days_20251320_20260220_v01.bsp',
    [INSTRUMENT, VERSION, ANCILLARY_EXTENSION],
    '20251320 is not a date of the calendar',
  ],
  [
    '#8 ephemeris type taco',
    'imap_taco_20251320_20260220_v01.bsp',
    [INSTRUMENT, VERSION, ANCILLARY_EXTENSION],
    '"taco" is not an ephemeris type (recon, nom, pred, 90days, long, launch)',
  ],
  ['#9 no pattern', 'test.txt', 'filename', undefined],
  ['#10 version v0.0001', 'imap_mag_l1a_burst_20210101_v0.0001.cdf', 'filename', undefined],
  [
    '#13 instrument hi-45 with a version of today',
    'imap_hi-45_l1a_de_20250105_v001.0000.cdf',
    'filename',
    '"hi-45" is not an instrument of today\'s archive',
  ],
  [
    '#14 level l4',
    'imap_mag_l4_burst_20250105_v001.0001.cdf',
    'filename',
    '"l4" is not a data level of today\'s archive',
  ],
  ['#15 V001', 'imap_mag_l1a_burst_20250105_V001.0001.cdf', 'filename', undefined],
  ['#15 CDF', 'imap_mag_l1a_burst_20250105_v001.0001.CDF', 'filename', 'the extension "CDF"'],
  ['#15 NAIF', 'NAIF0012.tls', 'filename', undefined],
  [
    '#16 two suffixes',
    'imap_mag_l1a_burst_20250105-repoint00001-cr00001_v001.0001.cdf',
    'filename',
    undefined,
  ],
];

describe('ARCHIVE-TODAY §5.2: invalid names', () => {
  it.each(INVALID)("refuses %s (%s) with the specification's messages", (_why, name, expected, hint) => {
    const error = refusal(name);
    expect(error.problems).toEqual(expected === 'filename' ? [FILENAME(name)] : expected);
    if (hint !== undefined) expect(error.hint).toContain(hint);
  });

  it("says what is wrong with a kernel whose extension is not its type's", () => {
    expect(refusal('naif0012.bsp').hint).toContain(
      'a leapseconds kernel (naif…) has the extension tls, not bsp',
    );
    expect(refusal('IMAP_PRED_20250101_20250201.bsp').hint).toContain(
      '"PRED" is not an ephemeris type (recon, nom, pred, 90days, long, launch); the ephemeris type is written in lower case',
    );
  });

  it("keeps the vocabularies apart: hi-45 with today's version, hi with the specification's", () => {
    refusal('imap_hi-45_l1a_de_20250105_v001.0000.cdf');
    expect(refusal('imap_hi_l1a_de_20250105_20250106_v01-00.cdf').problems).toEqual([INSTRUMENT]);
    expect(refusal('imap_mag_l3a_de_20250105_20250106_v01-00.cdf').problems).toEqual([messages.dataLevel]);
  });

  it("gives a name of the specification's shape with a vNNN token the specification's version message", () => {
    for (const name of [
      'imap_mag_l1a_norm_20240101_20240102_v001.cdf',
      'imap_swe_l0_raw_20240101_20240101_v001.pkts',
      'imap_mag_l1a_norm_20240101_20240102_v001.0002.cdf',
    ]) {
      expect(refusal(name).problems).toEqual([VERSION]);
    }
  });

  it('refuses a name of no kind with the expected pattern', () => {
    expect(refusal('notes.txt').problems).toEqual([FILENAME('notes.txt')]);
  });

  it.each([':', '*', '?', '"', '<', '>', '|'])(
    "refuses a descriptor of today's holding %s, which no file name may hold everywhere",
    (character) => {
      const science = `imap_mag_l1a_a${character}b_20250105_v001.0001.cdf`;
      expect(refusal(science).problems).toEqual([FILENAME(science)]);
      expect(refusal(science).hint).toContain(
        `the descriptor ${JSON.stringify(`a${character}b`)} holds '${character}'`,
      );
      const ancillary = `imap_mag_a${character}b_20250105_v001.csv`;
      expect(refusal(ancillary).hint).toContain(`'${character}'`);
    },
  );

  it('refuses a descriptor with a folder separator, a percent sign or a control character', () => {
    for (const descriptor of ['a\\b', 'a/b', 'a%2fb', 'a\u0007b', 'a\u0085b']) {
      expect(() => parseName(`imap_mag_l1a_${descriptor}_20250105_v001.0001.cdf`)).toThrow(ValidationError);
    }
    expect(parseName('imap_mag_l1a_x.y_20250105_v001.0001.cdf')).toMatchObject({ descriptor: 'x.y' });
    expect(parseName('imap_mag_l1a_20250101_20250105_v001.0001.cdf')).toMatchObject({
      descriptor: '20250101',
    });
  });
});

describe('ARCHIVE-TODAY §1.4: the case of SPICE names', () => {
  it.each([
    ['IMAP_2025_005_A01.SPICE.mk', 'metakernel', 'mk'],
    ['IMAP_pred_od025_20260303_20260414_v01.bsp', 'ephemeris_predicted', 'spk'],
    ['EARTH_000101_251112_250817.bpc', 'earth_attitude', 'pck'],
    ['IMAP_001.tf', 'imap_frames', 'fk'],
  ])('accepts %s: literal prefixes may be in any case', (name, kernelType, folder) => {
    expect(parseName(name)).toMatchObject({
      kind: 'spice',
      kernelType,
      path: `imap/spice/${folder}/${name}`,
    });
  });

  it.each([
    'NAIF0012.tls',
    'IMAP_DPS_2025_121_2025_202_07.ah.bc',
    'IMAP_PRED_20250101_20250201.bsp',
    'IMAP_SCLK_0012.tsc',
    'imap_2025_122_2025_122_01.SPIN.csv',
    'imap_001.TF',
  ])('refuses %s: the tokens that say a type are lower case', (name) => {
    const read = readSpiceName(name);
    expect(read === undefined || 'refused' in read).toBe(true);
    expect(refusal(name).problems.length).toBeGreaterThan(0);
  });
});

describe('ARCHIVE-TODAY §4.2: ambiguous names, read in the order of kinds', () => {
  it('reads a level and two dates as science with a descriptor of digits, and warns', () => {
    const file = parseName('imap_mag_l2_20250101_20250102_v001.cdf');
    expect(file).toMatchObject({
      kind: 'science',
      dataLevel: 'l2',
      descriptor: '20250101',
      startDate: '20250102',
      path: 'imap/mag/l2/2025/01/imap_mag_l2_20250101_20250102_v001.cdf',
    });
    expect(nameWarning(file)).toContain('descriptor 20250101 (all digits)');
  });

  it('reads a science name without a descriptor as ancillary', () => {
    expect(parseName('imap_mag_l1a_20250101_v001.cdf')).toMatchObject({
      kind: 'ancillary',
      descriptor: 'l1a',
      path: 'imap/ancillary/mag/imap_mag_l1a_20250101_v001.cdf',
    });
  });

  it('reads a json name of both grammars as ancillary, tried before dependency', () => {
    const file = parseName('imap_mag_l2_20250101_20250102_v001.json');
    expect(file).toMatchObject({ kind: 'ancillary', descriptor: 'l2', endDate: '20250102' });
    expect(nameWarning(file)).toBeUndefined();
  });

  it('warns of no other name', () => {
    expect(nameWarning(parseName('imap_mag_l1a_burst_20210101_v001.0001.cdf'))).toBeUndefined();
    expect(nameWarning(parseName('imap_mag_l1a_20240101_20240101_20240102_v01-00.cdf'))).toBeUndefined();
    expect(nameWarning(parseName('imap_mag_l1a_20250101_20250102_v001.0001.png'))).toContain('quicklook');
  });
});
