/**
 * The one version order over every form (ARCHIVE-TODAY §2): the specification's `vXX-YY` before any of today's,
 * today's minor-only `vNNN` before any `vNNN.NNNN`, then major and minor as numbers; `versionRank` the same order
 * as one 32-bit integer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { compareVersions, formatTodayVersion, parseVersion, versionRank } from '../../src/naming/versions.js';

const two = (value: number) => String(value).padStart(2, '0');
const specVersion = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))
  .map(([major, minor]) => `v${two(major)}-${two(minor)}`);
const minorOnly = fc.integer({ min: 0, max: 999 }).map((minor) => formatTodayVersion(undefined, minor));
const majorMinor = fc
  .tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 9999 }))
  .map(([major, minor]) => formatTodayVersion(major, minor));
const anyVersion = fc.oneof(specVersion, minorOnly, majorMinor);

/** The order the sheet states, worked out from the parts: (band, major, minor). */
function sheetKey(version: string): [number, number, number] {
  const parsed = parseVersion(version);
  if (!parsed) throw new Error(version);
  const band = { spec: 0, 'minor-only': 1, 'major-minor': 2, digits: -1 }[parsed.form];
  return [band, parsed.major ?? 0, parsed.minor];
}
const sign = (value: number) => Math.sign(value);
function sheetCompare(a: string, b: string): number {
  const [x, y] = [sheetKey(a), sheetKey(b)];
  for (let at = 0; at < 3; at += 1) if (x[at] !== y[at]) return sign((x[at] as number) - (y[at] as number));
  return 0;
}

describe('the version order across generations', () => {
  it('sorts every form as the sheet says', () => {
    const sorted = [
      'v002.0000',
      'v001',
      'v01-00',
      'v000.0000',
      'v999',
      'v001.0002',
      'v99-99',
      'v001.0001',
      'v00-01',
    ];
    expect([...sorted].sort(compareVersions)).toEqual([
      'v00-01',
      'v01-00',
      'v99-99',
      'v001',
      'v999',
      'v000.0000',
      'v001.0001',
      'v001.0002',
      'v002.0000',
    ]);
  });

  it.each([
    ['v99-99', 'v000'],
    ['v99-99', 'v000.0000'],
    ['v999', 'v000.0000'],
    ['v001.9999', 'v002.0000'],
    ['v001.0001', 'v001.0002'],
    ['v001', 'v002'],
    ['v01-99', 'v02-00'],
    ['v01-09', 'v01-10'],
  ])('%s is older than %s', (older, newer) => {
    expect(compareVersions(older, newer)).toBeLessThan(0);
    expect(compareVersions(newer, older)).toBeGreaterThan(0);
    expect(versionRank(older)).toBeLessThan(versionRank(newer));
  });

  it('compares major, then minor, as numbers', () => {
    expect(compareVersions('v010.0000', 'v002.9999')).toBeGreaterThan(0);
    expect(compareVersions('v002.0010', 'v002.0009')).toBeGreaterThan(0);
    expect(compareVersions('v002.0001', 'v002.0001')).toBe(0);
    expect(compareVersions('v10-00', 'v09-99')).toBeGreaterThan(0);
  });

  it("compares a SPICE kernel's digits by their value", () => {
    expect(compareVersions('0012', '0011')).toBeGreaterThan(0);
    expect(compareVersions('01', '1')).toBe(0);
    expect(compareVersions('100', '99')).toBeGreaterThan(0);
  });

  it.each(['1.0', 'v1', 'v1-00', 'V001', 'v001.00001', 'v0.0001', 'latest', 'v001.', 'v01-0a'])(
    'refuses %s, of no version form, with a ValidationError',
    (text) => {
      expect(parseVersion(text)).toBeUndefined();
      expect(versionRank(text)).toBe(-1);
      expect(() => compareVersions(text, 'v001.0000')).toThrow(ValidationError);
      expect(() => compareVersions('v01-00', text)).toThrow(ValidationError);
    },
  );

  it('reads each form into its parts', () => {
    expect(parseVersion('v01-02')).toEqual({ form: 'spec', major: 1, minor: 2 });
    expect(parseVersion('v001.0002')).toEqual({ form: 'major-minor', major: 1, minor: 2 });
    expect(parseVersion('v003')).toEqual({ form: 'minor-only', major: undefined, minor: 3 });
    expect(parseVersion('0012')).toEqual({ form: 'digits', major: undefined, minor: 12 });
  });

  it('orders any two versions of the three forms as the sheet does, by compareVersions and by versionRank', () => {
    fc.assert(
      fc.property(anyVersion, anyVersion, (a, b) => {
        const expected = sheetCompare(a, b);
        expect(sign(compareVersions(a, b))).toBe(expected);
        expect(sign(versionRank(a) - versionRank(b))).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('ranks every version within a 32-bit signed integer, the extremes included', () => {
    for (const version of [
      'v00-00',
      'v99-99',
      'v000',
      'v999',
      'v000.0000',
      'v999.9999',
      '0',
      '9'.repeat(20),
    ]) {
      const rank = versionRank(version);
      expect(Number.isInteger(rank)).toBe(true);
      expect(rank).toBeGreaterThanOrEqual(0);
      expect(rank).toBeLessThanOrEqual(2 ** 31 - 1);
    }
    fc.assert(
      fc.property(anyVersion, (version) => {
        expect(versionRank(version) | 0).toBe(versionRank(version));
      }),
    );
  });
});
