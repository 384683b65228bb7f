/**
 * The generated archive of the scale benchmarks: names of the mission's kind (its 12 instruments, levels l0 to l2,
 * several descriptors per level, a second version of some products), the same number every day from FIRST_DAY,
 * so that the first `count` names are the first `count / FILES_PER_DAY` days and a query of one day or one month
 * answers as many records whatever the archive's size: what grows is the archive, not the answer.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTRUMENTS } from './store.js';

/** The products of an instrument, each one file a day: its level and descriptor. */
const PRODUCTS = [
  ['l0', 'raw'],
  ...['sci', 'hk', 'burst', 'norm', 'de', 'counts'].map((descriptor) => ['l1a', descriptor]),
  ...['sci', 'hk', 'burst', 'norm', 'de', 'counts'].map((descriptor) => ['l1b', descriptor]),
  ...['sci', 'burst', 'norm', 'de'].map((descriptor) => ['l1c', descriptor]),
  ...['sci', 'burst', 'norm'].map((descriptor) => ['l2', descriptor]),
];
/** Products of an instrument with a second version on a day: those whose index is the day's modulo this. */
const REPROCESSED_EVERY = 10;
/** Files of one instrument on one day: every product, and two of them a second time (v02-00). */
const PER_INSTRUMENT_DAY = PRODUCTS.length + PRODUCTS.length / REPROCESSED_EVERY;

/** Files a day across the mission. */
export const FILES_PER_DAY = INSTRUMENTS.length * PER_INSTRUMENT_DAY;
/** The first day of the archive. */
export const FIRST_DAY = Date.UTC(2016, 0, 1);
export const DAY_MS = 86_400_000;

/** `YYYYMMDD` of the `day`th day of the archive (0 is FIRST_DAY). */
export function dateOf(day) {
  return new Date(FIRST_DAY + day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
}

/** Days the first `count` files of the archive span (the last perhaps in part). */
export function daysOf(count) {
  return Math.ceil(count / FILES_PER_DAY);
}

/**
 * Calls `each(key, day)` for the first `count` storage paths of the archive, in order (day by day, then
 * instrument, product and version); `from` skips the first ones. Names are not kept, so 1,000,000 cost no memory.
 */
export function forEachKey(count, each, from = 0) {
  for (let day = Math.floor(from / FILES_PER_DAY); day * FILES_PER_DAY < count; day += 1) {
    const date = dateOf(day);
    const folder = `${date.slice(0, 4)}/${date.slice(4, 6)}`;
    let index = day * FILES_PER_DAY;
    for (const [i, instrument] of INSTRUMENTS.entries()) {
      for (const [p, [level, descriptor]] of PRODUCTS.entries()) {
        const extension = level === 'l0' ? 'pkts' : 'cdf';
        const versions = p % REPROCESSED_EVERY === (day + i) % REPROCESSED_EVERY ? 2 : 1;
        for (let v = 1; v <= versions; v += 1, index += 1) {
          if (index < from) continue;
          if (index >= count) return;
          const name = `imap_${instrument}_${level}_${descriptor}_${date}_${date}_v0${v}-00.${extension}`;
          each(`imap/${instrument}/${level}/${folder}/${name}`, day);
        }
      }
    }
  }
}

/** The first `count` storage paths of the archive. */
export function scaleKeys(count) {
  const keys = [];
  forEachKey(count, (key) => keys.push(key));
  return keys;
}

/**
 * Writes the first `count` files of the archive, `content` each, under every folder of `roots` (a store and a
 * data root), without any request: the store's copies get times spread over the past (their ingestion dates at
 * the server's start, the oldest day first and the last one ingested yesterday), so a sync after them finds
 * nothing new. Returns the keys.
 */
export function writeArchive(count, { store, roots = [], content = Buffer.from('scale\n') }) {
  const keys = scaleKeys(count);
  const folders = new Set(keys.map((key) => key.slice(0, key.lastIndexOf('/'))));
  for (const dir of [store, ...roots]) {
    for (const folder of folders) mkdirSync(join(dir, ...folder.split('/')), { recursive: true });
  }
  const lastDay = daysOf(count) - 1;
  const now = Date.now();
  forEachKey(count, (key, day) => {
    const parts = key.split('/');
    const stored = join(store, ...parts);
    writeFileSync(stored, content);
    const time = new Date(now - (1 + lastDay - day) * DAY_MS);
    utimesSync(stored, time, time);
    for (const root of roots) writeFileSync(join(root, ...parts), content);
  });
  return keys;
}
