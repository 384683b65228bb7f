// A year of daily files for one instrument at three levels, with known gaps and version bumps: the archive the
// coverage and status tests run on, and the one the README's timing of `coverage` was taken on.
//
//   node scripts/year-archive.js STORE_DIR    writes the files into STORE_DIR (a reference server's store)
//
// Prints the gaps and bumps it wrote as JSON. The tests state them again on their own, so a change here shows.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const YEAR = 2025;
export const INSTRUMENT = 'mag';
export const DESCRIPTOR = 'norm';
export const LEVELS = ['l1a', 'l1b', 'l2'];

/** Days without a file, per level, as [first, last] YYYYMMDD (both included). */
export const GAPS = {
  l1a: [
    ['20250210', '20250212'],
    ['20250704', '20250704'],
  ],
  l1b: [
    ['20250101', '20250101'],
    ['20250520', '20250529'],
    ['20251231', '20251231'],
  ],
  l2: [
    ['20250301', '20250331'],
    ['20251115', '20251116'],
  ],
};

/** Days reprocessed, per level: the versions stored beside v01-00. */
export const BUMPS = {
  l1a: { 20250105: ['v01-01'], 20250601: ['v01-01', 'v02-00'] },
  l1b: { 20250301: ['v01-01'] },
  l2: { 20251225: ['v01-01'] },
};

/** Every YYYYMMDD of the year. */
export function daysOfYear(year = YEAR) {
  const days = [];
  for (
    let day = new Date(Date.UTC(year, 0, 1));
    day.getUTCFullYear() === year;
    day.setUTCDate(day.getUTCDate() + 1)
  ) {
    days.push(day.toISOString().slice(0, 10).replaceAll('-', ''));
  }
  return days;
}

/** The storage path of a file of the year archive. */
export function yearPath(level, date, version) {
  const name = `imap_${INSTRUMENT}_${level}_${DESCRIPTOR}_${date}_${date}_${version}.cdf`;
  return `imap/${INSTRUMENT}/${level}/${date.slice(0, 4)}/${date.slice(4, 6)}/${name}`;
}

/** The storage paths of the archive, in order. */
export function yearArchivePaths() {
  const paths = [];
  for (const level of LEVELS) {
    const missing = (date) => GAPS[level].some(([first, last]) => date >= first && date <= last);
    for (const date of daysOfYear()) {
      if (missing(date)) continue;
      for (const version of ['v01-00', ...(BUMPS[level][date] ?? [])])
        paths.push(yearPath(level, date, version));
    }
  }
  return paths;
}

/** Writes the archive into `store`; resolves to the number of files. */
export async function writeYearArchive(store) {
  const paths = yearArchivePaths();
  const folders = new Set(paths.map((path) => path.slice(0, path.lastIndexOf('/'))));
  await Promise.all(
    [...folders].map((folder) => mkdir(join(store, ...folder.split('/')), { recursive: true })),
  );
  for (let at = 0; at < paths.length; at += 64) {
    await Promise.all(
      paths
        .slice(at, at + 64)
        .map((path) =>
          writeFile(
            join(store, ...path.split('/')),
            `contents of ${path.slice(path.lastIndexOf('/') + 1)}\n`,
          ),
        ),
    );
  }
  return paths.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const store = process.argv[2];
  if (!store) {
    process.stderr.write('usage: node scripts/year-archive.js STORE_DIR\n');
    process.exitCode = 2;
  } else {
    const files = await writeYearArchive(store);
    process.stdout.write(`${JSON.stringify({ store, files, gaps: GAPS, bumps: BUMPS }, null, 2)}\n`);
  }
}
