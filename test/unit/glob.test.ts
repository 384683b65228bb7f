import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { readTargets } from '../../src/naming/download-targets.js';
import { globExpression, readGlob } from '../../src/naming/glob.js';

const NAME = 'imap_mag_l2_norm_20250115_20250115_v01-01.cdf';
const PATH = `imap/mag/l2/2025/01/${NAME}`;

describe('globs over the archive', () => {
  it.each([
    [
      'imap_mag_l2_norm_202501*',
      { instrument: 'mag', dataLevel: 'l2', descriptor: 'norm', startDate: '20250101', endDate: '20250131' },
    ],
    ['imap_mag_l2_*', { instrument: 'mag', dataLevel: 'l2' }],
    ['imap_mag_*_norm_2025*', { instrument: 'mag' }],
    [
      'imap_swe_l1a_raw_20250107_*',
      { instrument: 'swe', dataLevel: 'l1a', descriptor: 'raw', startDate: '20250107', endDate: '20250107' },
    ],
    [
      'imap_hit_l0_raw_2025?1*',
      { instrument: 'hit', dataLevel: 'l0', descriptor: 'raw', startDate: '20250101', endDate: '20251231' },
    ],
    [
      'imap/mag/l2/2025/01/*.cdf',
      { instrument: 'mag', dataLevel: 'l2', startDate: '20250101', endDate: '20250131' },
    ],
    [
      'imap/mag/l2/2025/0[12]/*',
      { instrument: 'mag', dataLevel: 'l2', startDate: '20250101', endDate: '20251231' },
    ],
    ['imap/mag/*/2025/01/*', { instrument: 'mag' }],
    [
      'imap/mag/l2/2025/02/imap_mag_l2_norm_20250214_*',
      { instrument: 'mag', dataLevel: 'l2', descriptor: 'norm', startDate: '20250214', endDate: '20250214' },
    ],
    ['imap/ancillary/mag/imap_mag_*', { table: 'ancillary', instrument: 'mag' }],
    ['*.cdf', {}],
  ])('%s asks for %o', (pattern, filters) => {
    expect(readGlob(pattern).filters).toEqual(filters);
  });

  it('matches names, or whole storage paths, as a shell does, never across a folder', () => {
    expect(readGlob('imap_mag_l2_norm_202501*').matches(PATH)).toBe(true);
    expect(readGlob('imap_mag_l2_norm_202502*').matches(PATH)).toBe(false);
    expect(readGlob('imap/mag/l2/2025/01/*.cdf').matches(PATH)).toBe(true);
    expect(readGlob('imap/mag/l2/*.cdf').matches(PATH)).toBe(false);
    expect(readGlob('imap/mag/l2/2025/0[!2]/*_v01-0?.cdf').matches(PATH)).toBe(true);
    expect(readGlob('imap/mag/l2/2025/0[!1]/*').matches(PATH)).toBe(false);
    expect(readGlob('imap_mag_l2_norm_2025011[5-9]_*').matches(PATH)).toBe(true);
    expect(globExpression('a.b[c').test('a.b[c')).toBe(true);
    expect(globExpression('a.b').test('axb')).toBe(false);
  });
});

const CK_TYPES = ['attitude_history', 'attitude_predict', 'pointing_attitude'];
const spiceQueries = (types: readonly string[]) =>
  types.map((kernelType) => ({ table: 'spice', kernelType }));

describe("globs over today's kinds", () => {
  it.each([
    [
      'imap_hi_l3a_ena-45_202501*',
      {
        instrument: 'hi',
        dataLevel: 'l3a',
        descriptor: 'ena-45',
        startDate: '20250101',
        endDate: '20250131',
      },
    ],
    [
      'imap_mag_l1a_burst_20250105-repoint00042_*',
      {
        instrument: 'mag',
        dataLevel: 'l1a',
        descriptor: 'burst',
        startDate: '20250105',
        endDate: '20250105',
        repointing: '42',
      },
    ],
    [
      'imap_glows_l3a_test_20210101-cr00023_*',
      {
        instrument: 'glows',
        dataLevel: 'l3a',
        descriptor: 'test',
        startDate: '20210101',
        endDate: '20210101',
      },
    ],
    // A descriptor the query cannot take (a dot) is left to the glob's test.
    [
      'imap_mag_l1a_x.y_2025*',
      { instrument: 'mag', dataLevel: 'l1a', startDate: '20250101', endDate: '20251231' },
    ],
    [
      'imap/ultra/l1cb/2025/01/*',
      { instrument: 'ultra', dataLevel: 'l1cb', startDate: '20250101', endDate: '20250131' },
    ],
    [
      'imap_mag_calibration_2024*',
      {
        table: 'ancillary',
        instrument: 'mag',
        descriptor: 'calibration',
        startDate: '20240101',
        endDate: '20241231',
      },
    ],
    ['imap/ancillary/mag/*', { table: 'ancillary', instrument: 'mag' }],
    ['imap/ancillary/*/imap_mag_test_*', { table: 'ancillary', instrument: 'mag', descriptor: 'test' }],
  ])('%s asks for %o', (pattern, filters) => {
    const glob = readGlob(pattern);
    expect(glob.filters).toEqual(filters);
    expect(glob.queries).toEqual([filters]);
    expect(glob.unlisted).toBeUndefined();
  });

  it.each([
    ['imap/spice/ck/*', CK_TYPES],
    ['imap/spice/ck/*.ah.bc', ['attitude_history', 'pointing_attitude']],
    ['imap/spice/lsk/*', ['leapseconds']],
    ['imap/spice/spin/*', ['spin']],
    ['imap/spice/mk/*', ['metakernel']],
    ['imap/spice/*/*.tf', ['imap_frames', 'science_frames']],
    ['imap/spice/pck/*', ['planetary_constants', 'earth_attitude']],
    ['naif*.tls', ['leapseconds']],
    ['imap_sclk_*.tsc', ['spacecraft_clock']],
    ['imap_dps_*.ah.bc', ['attitude_history', 'pointing_attitude']],
    ['earth_*', ['earth_attitude']],
    ['imap/spice/ck/*.tls', []],
  ])('%s lists kernels of the types %o', (pattern, types) => {
    const glob = readGlob(pattern);
    expect(glob.queries).toEqual(spiceQueries(types));
    expect(glob.filters).toEqual(
      types.length === 1 ? { table: 'spice', kernelType: types[0] } : { table: 'spice' },
    );
  });

  it.each([
    'imap/quicklook/mag/*',
    'imap/dependency/mag/l1a/2021/01/*',
    'imap/release/mag/*',
    'imap_mag_l1a_*.png',
    'imap_mag_*.txt',
  ])('%s names files no query lists', (pattern) => {
    const glob = readGlob(pattern);
    expect(glob.unlisted).toContain("the archive's query lists no");
    expect(glob.queries).toEqual([]);
  });

  it('reads a name glob whose beginning no instrument has as one of kernels, and one any file may have as none', () => {
    expect(readGlob('imap_dps_*').queries).toContainEqual({
      table: 'spice',
      kernelType: 'pointing_attitude',
    });
    expect(readGlob('imap_2025_*').filters).toEqual({ table: 'spice' });
    expect(readGlob('imap_h*').filters).toEqual({});
    expect(readGlob('imap_*').filters).toEqual({});
  });

  it('matches kernels in their folder only', () => {
    const ck = readGlob('imap/spice/ck/*');
    expect(ck.matches('imap/spice/ck/imap_dps_2025_121_2025_202_07.ah.bc')).toBe(true);
    expect(ck.matches('imap/spice/spk/de440.bsp')).toBe(false);
    expect(readGlob('naif*.tls').matches('imap/spice/lsk/naif0012.tls')).toBe(true);
  });
});

describe('download targets', () => {
  const dataDir = '/srv/data';
  const read = (...paths: string[]) => readTargets(paths, dataDir, '/home/someone');

  it('reads a bare name, a storage path and a local path of every kind as the file it names', () => {
    for (const path of [
      'imap_mag_l1a_burst_20210101_v001.0001.cdf',
      'naif0012.tls',
      'imap/spice/lsk/naif0012.tls',
      'imap/quicklook/mag/l1a/2021/01/imap_mag_l1a_test_20210101-repoint00001_v001.0001.png',
    ]) {
      expect(read(path)).toEqual({ kind: 'files', paths: [path], globs: [] });
    }
    expect(read('/srv/data/imap/spice/ck/imap_dps_2025_121_2025_202_07.ah.bc')).toEqual({
      kind: 'files',
      paths: ['imap/spice/ck/imap_dps_2025_121_2025_202_07.ah.bc'],
      globs: [],
    });
  });

  it('reads a science folder of either generation as its query', () => {
    expect(read('imap/hi/l3a/2025/01/')).toEqual({
      kind: 'folder',
      folder: 'imap/hi/l3a/2025/01/',
      filters: { instrument: 'hi', dataLevel: 'l3a', startDate: '20250101', endDate: '20250131' },
    });
  });

  it("reads an instrument's ancillary folder as the ancillary table's query", () => {
    expect(read('imap/ancillary/mag/')).toEqual({
      kind: 'folder',
      folder: 'imap/ancillary/mag/',
      filters: { table: 'ancillary', instrument: 'mag' },
    });
    expect(() => read('imap/ancillary/')).toThrow('one folder per instrument, imap/ancillary/<instrument>/');
  });

  it('reads a folder of SPICE kernels as the glob of its files', () => {
    const ck = read('imap/spice/ck/');
    expect(ck.kind).toBe('files');
    const glob = ck.kind === 'files' ? ck.globs[0] : undefined;
    expect(glob?.pattern).toBe('imap/spice/ck/*');
    expect(glob?.queries).toEqual(spiceQueries(CK_TYPES));
    const lsk = read('/srv/data/imap/spice/lsk');
    expect(lsk.kind === 'files' ? lsk.globs[0]?.filters : undefined).toEqual({
      table: 'spice',
      kernelType: 'leapseconds',
    });
    expect(read('imap/spice/').kind).toBe('files');
    expect(() => read('imap/spice/kernels/')).toThrow(
      'imap/spice/kernels/ is not a folder of SPICE kernels: they lie in imap/spice/<kernel folder>/, one of ck, spk, pck, lsk, sclk, fk, mk, spin, repoint, activities.',
    );
  });

  it('refuses folders and globs of files no query lists, saying how to get them', () => {
    expect(() => read('imap/quicklook/mag/l1a/')).toThrow(
      "imap/quicklook/mag/l1a/ holds quicklooks, which the archive's query does not list: download them by name or by storage path.",
    );
    expect(() => read('imap/release/mag/')).toThrow('holds release manifests');
    expect(() => read('imap/dependency/mag/*')).toThrow("the archive's query lists no dependency files");
    expect(() => read('imap/spice/ck/*.tls')).toThrow('can match no file of the archive');
  });

  it('refuses a glob that pins down neither an instrument nor a kind of kernel', () => {
    for (const pattern of ['*.cdf', 'imap_*', '*']) {
      expect(() => read(pattern)).toThrow(UsageError);
      expect(() => read(pattern)).toThrow('does not say which instrument');
    }
  });
});
