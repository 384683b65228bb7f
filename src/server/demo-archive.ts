/** The demo archive: a small, deterministic store to try the tool offline. */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { StoreError } from '../core/errors.js';
import type { DataLevel, Instrument } from '../naming/mission.js';
import { scienceExtensionFor } from '../naming/mission.js';
import { formatName, parseName } from '../naming/names.js';

/** The science products of the demo: instrument, level and descriptor. */
const PRODUCTS: ReadonlyArray<readonly [Instrument, DataLevel, string]> = [
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
  names.push(...ANCILLARY);
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

/** The demo ingestion time of a file: the morning after its start date, a week later per extra version. */
function demoIngestion(startDate: string, version: string): Date {
  const minor = Number(version.slice(4, 6)) + (Number(version.slice(1, 3)) - 1) * 10;
  const year = Number(startDate.slice(0, 4));
  const month = Number(startDate.slice(4, 6)) - 1;
  const day = Number(startDate.slice(6, 8));
  return new Date(Date.UTC(year, month, day + 1 + minor * 7, 6, 0, 0));
}

/** True when the store folder holds nothing but dot-files (or does not exist yet). */
export async function isStoreEmpty(storeDir: string): Promise<boolean> {
  try {
    return (await readdir(storeDir)).every((name) => name.startsWith('.'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    throw new StoreError(`Cannot use ${resolve(storeDir)} as the store folder (${code ?? 'error'}).`, {
      cause: error,
    });
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
