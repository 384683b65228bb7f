import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { fileFromLocalPath, isInside, resolveLocalPath } from '../../src/naming/layout.js';
import { parseName } from '../../src/naming/names.js';

const root = resolve('/tmp/mission-root');
const name = 'imap_mag_l1a_norm_20240105_20240106_v01-00.cdf';

describe('resolveLocalPath', () => {
  it('maps a science name to <root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename>', () => {
    expect(resolveLocalPath(root, name)).toBe(`${root}/imap/mag/l1a/2024/01/${name}`);
    expect(resolveLocalPath(root, parseName(name))).toBe(`${root}/imap/mag/l1a/2024/01/${name}`);
    expect(resolveLocalPath(root, `imap/mag/l1a/2024/01/${name}`)).toBe(
      `${root}/imap/mag/l1a/2024/01/${name}`,
    );
  });

  it('maps an ancillary name to <root>/imap/ancillary/<instrument>/<filename>', () => {
    expect(resolveLocalPath(root, 'imap_swe_lut_20240101_v02-00.json')).toBe(
      `${root}/imap/ancillary/swe/imap_swe_lut_20240101_v02-00.json`,
    );
  });

  it('uses the start date for the year and month folders', () => {
    expect(resolveLocalPath(root, 'imap_hit_l2_sci_20241231_20250101_v01-00.cdf')).toBe(
      `${root}/imap/hit/l2/2024/12/imap_hit_l2_sci_20241231_20250101_v01-00.cdf`,
    );
  });

  it('works from a relative root or one with a trailing slash, always returning an absolute path', () => {
    expect(resolveLocalPath('data', name)).toBe(resolve('data', 'imap/mag/l1a/2024/01', name));
    expect(resolveLocalPath(`${root}/`, name)).toBe(`${root}/imap/mag/l1a/2024/01/${name}`);
  });

  it('refuses paths that would leave the root or break the layout', () => {
    for (const [bad, reason] of [
      ['../etc/passwd', "'..'"],
      [`imap/mag/l1a/2024/01/../../../../../${name}`, "'..'"],
      [`/abs/${name}`, 'absolute'],
      [`imap/%2e%2e/${name}`, "'..' segment once percent-decoded"],
      [`imap/swe/l1a/2024/01/${name}`, 'the instrument folder is "swe"'],
      ['x', 'Invalid filename x.'],
    ]) {
      expect(() => resolveLocalPath(root, bad as string)).toThrow(ValidationError);
      expect(() => resolveLocalPath(root, bad as string)).toThrow(reason);
    }
  });
});

describe('fileFromLocalPath', () => {
  it('reads the file back from its local path', () => {
    expect(fileFromLocalPath(root, `${root}/imap/mag/l1a/2024/01/${name}`).name).toBe(name);
    const ancillary = 'imap_swe_lut_20240101_v02-00.json';
    expect(fileFromLocalPath(root, `${root}/imap/ancillary/swe/${ancillary}`)).toMatchObject({
      kind: 'ancillary',
      name: ancillary,
    });
  });

  it('refuses a path outside the root, or in another layout', () => {
    expect(() => fileFromLocalPath(root, `/elsewhere/imap/mag/l1a/2024/01/${name}`)).toThrow(
      'not inside the data root',
    );
    expect(() => fileFromLocalPath(root, `${root}/${name}`)).toThrow(`expected imap/mag/l1a/2024/01/${name}`);
    expect(() => fileFromLocalPath(root, `${root}-other/imap/mag/l1a/2024/01/${name}`)).toThrow(
      'not inside the data root',
    );
    expect(() => fileFromLocalPath(root, root)).toThrow(ValidationError);
    expect(() => fileFromLocalPath(root, `${root}/imap/mag/l1a/2024/02/${name}`)).toThrow(
      'the month folder is "02"',
    );
  });
});

describe('isInside', () => {
  it('is true for the root and below, false for siblings with a common prefix', () => {
    expect(isInside(root, root)).toBe(true);
    expect(isInside(root, `${root}/a/b`)).toBe(true);
    expect(isInside(root, `${root}-other/a`)).toBe(false);
    expect(isInside(root, `${root}/..`)).toBe(false);
  });
});
