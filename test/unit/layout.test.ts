import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import {
  fileFromLocalPath,
  isInside,
  LOCAL_LAYOUT,
  locateFile,
  misplacedFile,
  resolveLocalPath,
} from '../../src/naming/layout.js';
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
      ['imap/mag/l1a/2024/01/CON.cdf', 'named after the Windows device CON'],
      ['imap/mag/l1a/2024/01/a:b.cdf', "holds ':', which Windows refuses in a name"],
      [`imap/mag/l1a/2024/01/${name}.`, 'ends with a dot'],
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

/** One name of each kind of today's archive, with its storage folder (ARCHIVE-TODAY §1). */
const TODAY: ReadonlyArray<[string, string, string]> = [
  [
    'science with a repointing',
    'imap_mag_l0_raw_20210101-repoint00001_v000.0001.pkts',
    'imap/mag/l0/2021/01',
  ],
  ['science with a CR', 'imap_glows_l3a_test_20210101-cr00023_v000.0001.cdf', 'imap/glows/l3a/2021/01'],
  ['ancillary', 'imap_mag_test_20210101_20210102_v001.cdf', 'imap/ancillary/mag'],
  ['quicklook', 'imap_mag_l1a_test_20210101-repoint00001_v001.0001.png', 'imap/quicklook/mag/l1a/2021/01'],
  ['dependency', 'imap_mag_l1a_test_20210101_v000.0001.json', 'imap/dependency/mag/l1a/2021/01'],
  ['release', 'imap_mag_withhold-data-release-001_20260201_20260430_v001.txt', 'imap/release/mag'],
  ['ck', 'imap_dps_2025_121_2025_202_07.ah.bc', 'imap/spice/ck'],
  ['spk', 'imap_pred_od004_20251002_20251113_v01.bsp', 'imap/spice/spk'],
  ['pck', 'earth_000101_251112_250817.bpc', 'imap/spice/pck'],
  ['lsk', 'naif0012.tls', 'imap/spice/lsk'],
  ['sclk', 'imap_sclk_0012.tsc', 'imap/spice/sclk'],
  ['fk', 'imap_science_0001.tf', 'imap/spice/fk'],
  ['mk', 'imap_sdc_metakernel_2025_v100.tm', 'imap/spice/mk'],
  ['spin', 'imap_2025_122_2025_122_01.spin.csv', 'imap/spice/spin'],
  ['repoint', 'imap_2025_122_01.repoint', 'imap/spice/repoint'],
  ['activities', 'imap_2026_267_2026_267_hist_02.sff', 'imap/spice/activities'],
];

describe("the layout of today's kinds", () => {
  it.each(TODAY)('places a %s file (%s) in <root>/%s/', (_kind, file, folder) => {
    const path = `${folder}/${file}`;
    const local = `${root}/${path}`;
    expect(resolveLocalPath(root, file)).toBe(local);
    expect(resolveLocalPath(root, path)).toBe(local);
    expect(locateFile(file)).toEqual(parseName(file));
    expect(locateFile(path)).toEqual(parseName(file));
    expect(fileFromLocalPath(root, local)).toEqual(parseName(file));
    expect(misplacedFile(root, local, parseName(file))).toBeUndefined();
    expect(misplacedFile(root, `${root}/${file}`, parseName(file))).toBeUndefined();
    expect(misplacedFile(root, `/elsewhere/${path}`, parseName(file))).toBeUndefined();
  });

  it('says where a kernel in the wrong folder belongs, below the root and elsewhere', () => {
    const kernel = parseName('naif0012.tls');
    expect(() => locateFile(`imap/spice/spk/${kernel.name}`)).toThrow(
      'the kernel folder is "spk" but a leapseconds kernel lives in lsk; expected imap/spice/lsk/naif0012.tls (<mission>/spice/<kernel folder>/<filename>)',
    );
    expect(() => fileFromLocalPath(root, `${root}/imap/spice/spk/naif0012.tls`)).toThrow(
      'expected imap/spice/lsk/',
    );
    expect(misplacedFile(root, `${root}/imap/spice/ck/naif0012.tls`, kernel)).toBe(
      `${root}/imap/spice/ck/naif0012.tls is in the wrong folder: the kernel folder is "ck" but a leapseconds kernel lives in lsk; expected ${root}/imap/spice/lsk/naif0012.tls.`,
    );
    expect(misplacedFile(root, '/elsewhere/imap/spice/ck/naif0012.tls', kernel)).toContain(
      'expected /elsewhere/imap/spice/lsk/naif0012.tls',
    );
    expect(misplacedFile(root, '/elsewhere/kernels/naif0012.tls', kernel)).toBeUndefined();
  });

  it('says which folder names the kind: a quicklook below the science folders, an ancillary file below release', () => {
    const quicklook = 'imap_mag_l1a_test_20210101-repoint00001_v001.0001.png';
    expect(() => locateFile(`imap/mag/l1a/2021/01/${quicklook}`)).toThrow(
      `it has 5 folders above the file name where 6 folders belong; expected imap/quicklook/mag/l1a/2021/01/${quicklook}`,
    );
    expect(() => locateFile(`imap/dependency/mag/l1a/2021/01/${quicklook}`)).toThrow(
      'the second folder is "dependency" but quicklooks live under quicklook',
    );
    const ancillary = 'imap_mag_test_20210101_v001.csv';
    expect(() => locateFile(`imap/release/mag/${ancillary}`)).toThrow(
      'the second folder is "release" but ancillary files live under ancillary',
    );
  });

  it('takes a storage path whose name is of a newer form as it is, and refuses such a bare name', () => {
    for (const path of [
      'imap/mag/l1a/2025/01/imap_mag_l1a_x_20250105_v002.00001.cdf',
      'imap/spice/spk/imap_taco_20251020_20260220_v01.bsp',
      'imap/spice/newfolder/imap_2030_001_a01.newkernel',
    ]) {
      const name = path.slice(path.lastIndexOf('/') + 1);
      expect(locateFile(path)).toEqual({ kind: 'unchecked', name, path });
      expect(resolveLocalPath(root, path)).toBe(`${root}/${path}`);
      expect(() => locateFile(name)).toThrow(ValidationError);
    }
  });

  it("describes every kind's place in LOCAL_LAYOUT, the science layout first", () => {
    expect(
      LOCAL_LAYOUT.startsWith(
        '<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename> for science files, ',
      ),
    ).toBe(true);
    for (const place of [
      '<root>/<mission>/ancillary/<instrument>/<filename> for ancillary files',
      '<root>/<mission>/spice/<kernel folder>/<filename> for SPICE kernels',
      '<root>/<mission>/quicklook/<instrument>/<data_level>/<year>/<month>/<filename> for quicklooks',
      '<root>/<mission>/dependency/<instrument>/<data_level>/<year>/<month>/<filename> for dependency files',
      '<root>/<mission>/release/<instrument>/<filename> for release manifests',
    ]) {
      expect(LOCAL_LAYOUT).toContain(place);
    }
  });
});
