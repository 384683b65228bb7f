/**
 * The demo archive: a small, deterministic store to try the tool offline, with files of every kind of both
 * generations: the specification's science and ancillary files of January and February 2025, and today's
 * archive's of March 2025 (science with and without a repointing or Carrington-rotation suffix, several versions
 * of one product, ancillary files, a kernel in every SPICE folder, a quicklook, a dependency file and a release
 * manifest), and one product of January with versions of both generations.
 */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SpecDataLevel, SpecInstrument } from '../naming/mission.js';
import { scienceExtensionFor } from '../naming/mission.js';
import { formatName, parseName } from '../naming/names.js';
import { parseVersion } from '../naming/versions.js';
import { storeFolderError } from './objects/store-folder.js';

/** The science products of the demo: instrument, level and descriptor. */
const PRODUCTS: ReadonlyArray<readonly [SpecInstrument, SpecDataLevel, string]> = [
  ['mag', 'l0', 'raw'],
  ['mag', 'l1a', 'norm-mago'],
  ['mag', 'l1a', 'burst-magi'],
  ['mag', 'l1b', 'norm-mago'],
  ['mag', 'l2', 'norm'],
  ['swe', 'l0', 'raw'],
  ['swe', 'l1a', 'sci'],
  ['swe', 'l2', 'sci'],
  ['codice', 'l0', 'raw'],
  ['codice', 'l1a', 'hi-counters'],
  ['codice', 'l1b', 'lo-sw-species'],
  ['hit', 'l0', 'raw'],
  ['hit', 'l1a', 'count-rates'],
  ['glows', 'l0', 'raw'],
  ['glows', 'l1a', 'hist'],
];

/** Weekly start dates across January and February 2025. */
const DATES = [
  '20250101',
  '20250108',
  '20250115',
  '20250122',
  '20250129',
  '20250205',
  '20250212',
  '20250219',
  '20250226',
];

/** Ancillary files: some with one date, some with two, one with two versions. */
const ANCILLARY = [
  'imap_mag_calibration_20250101_20250630_v01-00.cdf',
  'imap_mag_calibration_20250101_20250630_v01-01.cdf',
  'imap_swe_lookup-table_20250101_v01-00.csv',
  'imap_hit_parameters_20250115_v01-00.json',
  'imap_glows_exclusions_20250110_20250310_v01-00.dat',
] as const;

/** Files of today's archive, each kind once or more, in March 2025 but the one product of both generations. */
const TODAY_FILES = [
  // Science: one product with a repointing suffix in three versions, the next repointing, a Carrington
  // rotation, a level of today without suffix, packets above level 0.
  'imap_hi_l3a_ena-45_20250305-repoint00042_v001.0001.cdf',
  'imap_hi_l3a_ena-45_20250305-repoint00042_v001.0002.cdf',
  'imap_hi_l3a_ena-45_20250305-repoint00042_v002.0000.cdf',
  'imap_hi_l3a_ena-45_20250306-repoint00043_v001.0001.cdf',
  'imap_glows_l3a_lightcurve_20250310-cr02291_v000.0001.cdf',
  'imap_ultra_l1cb_spin_20250305_v002.0013.cdf',
  'imap_ultra_l1cb_spin_20250312_v001.0000.cdf',
  'imap_ialirt_l1_packets_20250305_v001.0000.pkts',
  // A product of the specification's generation (its v01-00 above) reprocessed under today's versions.
  'imap_codice_l1a_hi-counters_20250101_v001.0001.cdf',
  // Ancillary files of today: vNNN, one in two versions, one with a single date.
  'imap_hi_esa-energies_20250301_20251231_v001.csv',
  'imap_hi_esa-energies_20250301_20251231_v002.csv',
  'imap_ultra_sensitivity_20250301_v001.json',
  // A kernel in every SPICE folder (ck spk pck lsk sclk fk mk spin repoint activities), leap seconds twice.
  'imap_2025_060_2025_061_001.ah.bc',
  'imap_recon_20250301_20250401_v01.bsp',
  'pck00011.tpc',
  'naif0011.tls',
  'naif0012.tls',
  'imap_sclk_0012.tsc',
  'imap_001.tf',
  'imap_sdc_metakernel_2025_v100.tm',
  'imap_2025_060_2025_060_01.spin.csv',
  'imap_2025_064_01.repoint.csv',
  'imap_2025_065_2025_065_hist_01.sff',
  // A quicklook, a dependency file and a release manifest.
  'imap_hi_l3a_ena-45_20250305-repoint00042_v002.0000.png',
  'imap_hi_l3a_ena-45_20250305-repoint00042_v002.0000.json',
  'imap_hi_data-release-001_20250301_20250331_v001.txt',
] as const;

/** The names of the demo archive, in a fixed order. */
export function demoFileNames(): string[] {
  const names: string[] = [];
  for (const [dateIndex, date] of DATES.entries()) {
    for (const [productIndex, [instrument, dataLevel, descriptor]] of PRODUCTS.entries()) {
      // Higher-level products are reprocessed now and then: a second version, and once a third and a fourth.
      const reprocessedOften =
        instrument === 'mag' && dataLevel === 'l1a' && descriptor === 'norm-mago' && dateIndex === 0;
      const versions = ['v01-00'];
      if (dataLevel !== 'l0' && ((dateIndex + productIndex) % 3 === 0 || reprocessedOften))
        versions.push('v01-01');
      if (reprocessedOften) versions.push('v01-02', 'v02-00');
      for (const version of versions) {
        names.push(
          formatName({
            kind: 'science',
            mission: 'imap',
            instrument,
            dataLevel,
            descriptor,
            startDate: date,
            endDate: date,
            version,
            extension: scienceExtensionFor(dataLevel),
          }),
        );
      }
    }
  }
  names.push(...ANCILLARY, ...TODAY_FILES);
  return names;
}

/** A small deterministic byte content for a name: a readable header, then pseudo-random bytes. */
export function demoContent(name: string): Buffer {
  let seed = 2166136261;
  for (const char of name) seed = Math.imul(seed ^ char.charCodeAt(0), 16777619) >>> 0;
  const size = 1024 + (seed % 7168);
  const bytes = Buffer.alloc(size);
  const header = Buffer.from(`mission-data demo file ${name}\n`, 'utf8');
  header.copy(bytes);
  for (let i = header.length; i < size; i += 1) {
    // xorshift32: the same bytes on every machine.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    bytes[i] = seed & 0xff;
  }
  return bytes;
}

/**
 * The demo ingestion time of a file: the morning after its start date (a kernel without dates: 1 March 2025),
 * a week later per step of its version.
 */
function demoIngestion(startDate: string | undefined, version: string): Date {
  const parsed = parseVersion(version);
  const minor =
    parsed?.form === 'spec'
      ? parsed.minor + (parsed.major - 1) * 10
      : parsed?.form === 'major-minor' || parsed?.form === 'minor-only'
        ? (parsed.major ?? 0) * 5 + parsed.minor
        : 0;
  return demoDay(startDate ?? '20250301', minor);
}

/** 06:00 UTC of the day after `startDate`, and `weeks` weeks on. */
function demoDay(startDate: string, weeks: number): Date {
  const year = Number(startDate.slice(0, 4));
  const month = Number(startDate.slice(4, 6)) - 1;
  const day = Number(startDate.slice(6, 8));
  return new Date(Date.UTC(year, month, day + 1 + weeks * 7, 6, 0, 0));
}

/** True when the store folder holds nothing but dot-files (or does not exist yet). */
export async function isStoreEmpty(storeDir: string): Promise<boolean> {
  try {
    return (await readdir(storeDir)).every((name) => name.startsWith('.'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw await storeFolderError(storeDir, error);
  }
}

/**
 * Writes the demo archive into `storeDir` at the storage keys, with fixed contents and ingestion times.
 * Never replaces a file; returns the number of files written.
 */
export async function writeDemoArchive(storeDir: string): Promise<number> {
  let written = 0;
  for (const name of demoFileNames()) {
    const file = parseName(name);
    const path = join(storeDir, ...file.path.split('/'));
    await mkdir(dirname(path), { recursive: true });
    try {
      await writeFile(path, demoContent(name), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const ingested = demoIngestion(file.startDate, file.version);
    await utimes(path, ingested, ingested);
    written += 1;
  }
  return written;
}
