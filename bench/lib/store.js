/** Generates large stores for benchmarks: files in the store layout with small or empty contents. */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The mission's instruments, as the generated stores name them. */
export const INSTRUMENTS = [
  'mag',
  'swe',
  'codice',
  'hit',
  'glows',
  'idex',
  'lo',
  'swapi',
  'ultra-45',
  'ultra-90',
  'hi-45',
  'hi-90',
];
const LEVELS = ['l0', 'l1a', 'l1b', 'l2'];
const DESCRIPTORS = ['sci', 'burst'];
const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2024, 0, 1);

function yyyymmdd(time) {
  return new Date(time).toISOString().slice(0, 10).replaceAll('-', '');
}

/**
 * The keys of a store of `count` science files, in a fixed order: every instrument, levels l0 (`.pkts`)
 * and l1a/l1b/l2 (`.cdf`), two descriptors above l0, one file per product per day from 2024-01-01, and a
 * second version for about one product in four.
 */
export function storeKeys(count) {
  const keys = [];
  for (let day = 0; keys.length < count; day += 1) {
    const date = yyyymmdd(FIRST_DAY + day * DAY_MS);
    const folder = `${date.slice(0, 4)}/${date.slice(4, 6)}`;
    for (const [i, instrument] of INSTRUMENTS.entries()) {
      for (const [l, level] of LEVELS.entries()) {
        const descriptors = level === 'l0' ? ['raw'] : DESCRIPTORS;
        const extension = level === 'l0' ? 'pkts' : 'cdf';
        for (const [d, descriptor] of descriptors.entries()) {
          const versions = (day + i + l + d) % 4 === 0 && level !== 'l0' ? ['v01-00', 'v01-01'] : ['v01-00'];
          for (const version of versions) {
            if (keys.length >= count) return keys;
            const name = `imap_${instrument}_${level}_${descriptor}_${date}_${date}_${version}.${extension}`;
            keys.push(`imap/${instrument}/${level}/${folder}/${name}`);
          }
        }
      }
    }
  }
  return keys;
}

/**
 * Writes a store of `count` files under `dir` (each `size` bytes, default empty) and returns their keys.
 * Synchronous writes in slices: several times faster than one promise per file for 100,000 small files,
 * while the event loop still turns between slices.
 */
export async function generateStore(dir, { count, size = 0 } = {}) {
  if (!Number.isInteger(count) || count < 0) throw new Error('generateStore needs a whole count of files');
  const keys = storeKeys(count);
  const folders = new Set(keys.map((key) => key.slice(0, key.lastIndexOf('/'))));
  for (const folder of folders) mkdirSync(join(dir, ...folder.split('/')), { recursive: true });
  const content = Buffer.alloc(size, 0x5a);
  for (let start = 0; start < keys.length; start += 1000) {
    for (const key of keys.slice(start, start + 1000)) writeFileSync(join(dir, ...key.split('/')), content);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { keys };
}

/**
 * A generated store of `count` empty files kept between runs under the system temporary folder (its
 * contents are deterministic, and read-only cases never change it). Writing 100,000 files takes from
 * seconds to a minute depending on the disk, so it is done once. A `.complete` marker guards against
 * reusing a half-written store.
 */
export async function cachedStore(count) {
  const dir = join(tmpdir(), `mission-data-bench-store-${count}-v1`);
  const marker = join(dir, '.complete');
  if (existsSync(marker)) return { dir, keys: storeKeys(count), reused: true };
  rmSync(dir, { recursive: true, force: true });
  const { keys } = await generateStore(dir, { count });
  writeFileSync(marker, new Date().toISOString());
  return { dir, keys, reused: false };
}

/** The storage key of the one large object of `size` bytes that the transfer benchmarks download. */
export function largeKey(size) {
  return `imap/mag/l1b/2024/01/imap_mag_l1b_large${size / 1024 / 1024}mib_20240101_20240101_v01-00.cdf`;
}

/** A store under `dir` holding one file, matched alone by `query --instrument mag`; returns its key. */
export function writeOneRecordStore(dir) {
  const key = 'imap/mag/l1a/2024/01/imap_mag_l1a_sci_20240101_20240101_v01-00.cdf';
  mkdirSync(join(dir, 'imap/mag/l1a/2024/01'), { recursive: true });
  writeFileSync(join(dir, ...key.split('/')), Buffer.alloc(1024, 0x5a));
  return key;
}
