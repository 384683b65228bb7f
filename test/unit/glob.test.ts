import { describe, expect, it } from 'vitest';
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
