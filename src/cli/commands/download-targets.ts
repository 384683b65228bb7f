/**
 * What `download` was given on its command line, read as a person means it: a storage path or name as it is,
 * a path inside the data root (`./data/imap/…`, absolute or relative) as the storage path it holds, a folder
 * of the layout (`imap/mag/l2/2025/01/`) as the query its folders spell, and a glob refused with the filters
 * that do the same.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { isInside } from '../../naming/layout.js';
import { ANCILLARY_FOLDER, MISSION } from '../../naming/mission.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';

/** Files named one by one, or one folder of the layout with the filters that select what it holds. */
export type DownloadTargets =
  | { kind: 'files'; paths: string[] }
  | { kind: 'folder'; folder: string; filters: QueryFilters };

const GLOB = /[*?[]/;

/** Reads the targets of `download`; throws a `UsageError` for a glob or a folder the layout has not. */
export function readTargets(paths: readonly string[], dataDir: string, cwd = process.cwd()): DownloadTargets {
  for (const path of paths) {
    if (GLOB.test(path)) throw globRefusal(path);
  }
  const storage = paths.map((path) => storagePathOf(path, dataDir, cwd));
  const folders = storage.filter((entry) => entry.folder);
  if (folders.length === 0) return { kind: 'files', paths: storage.map((entry) => entry.path) };
  if (storage.length > 1) {
    throw new UsageError(
      `Give one folder at a time, without other paths (got ${storage.length} targets, ${folders.length} of them folders).`,
    );
  }
  const folder = storage[0]?.path ?? '';
  return { kind: 'folder', folder: `${folder}/`, filters: folderFilters(folder) };
}

/** The storage path a target names, and whether it names a folder. */
function storagePathOf(given: string, dataDir: string, cwd: string): { path: string; folder: boolean } {
  let path = given;
  const first = given.split('/')[0] ?? '';
  const local =
    isAbsolute(given) || first === '.' || first === '..' || (given.includes('/') && first !== MISSION);
  if (local) {
    const absolute = resolve(cwd, given);
    const root = resolve(dataDir);
    if (!isInside(root, absolute)) {
      // A relative path of another form is left to the storage-path rules, which say what is wrong with it.
      if (isAbsolute(given) || first === '.' || first === '..') {
        throw new UsageError(
          `${given} is not inside the data root ${root}: give a storage path (imap/<instrument>/…), a file name, or a path below the data root.`,
        );
      }
      return { path: given, folder: false };
    }
    if (absolute === root) {
      throw new UsageError(
        `${given} is the data root itself: give a folder below it (such as imap/mag/l2/2025/01/) or query options.`,
      );
    }
    path = relative(root, absolute).split(sep).join('/');
    if (given.endsWith('/')) path += '/';
  }
  const trimmed = path.replace(/\/+$/, '');
  const segments = trimmed.split('/');
  const last = segments[segments.length - 1] ?? '';
  const isFolder = path.endsWith('/') || (segments[0] === MISSION && !last.includes('.'));
  return { path: isFolder ? trimmed : path, folder: isFolder };
}

/** The filters a folder of the layout spells: `imap/<instrument>[/<level>[/<year>[/<month>]]]`. */
export function folderFilters(folder: string): QueryFilters {
  const [mission, instrument, level, year, month, ...rest] = folder.split('/');
  const shape = 'imap/<instrument>/<data_level>/<year>/<month>/';
  if (mission !== MISSION || instrument === undefined || rest.length > 0) {
    throw new UsageError(`${folder}/ is not a folder of the layout (${shape}).`);
  }
  if (instrument === ANCILLARY_FOLDER) {
    throw new UsageError(
      `${folder}/ is an ancillary folder: download its files by name, or list them with mission-data query.`,
    );
  }
  const filters: QueryFilters = { instrument };
  if (level !== undefined) filters.dataLevel = level;
  if (year !== undefined) {
    if (!/^\d{4}$/.test(year)) throw new UsageError(`${folder}/: ${year} is not a year (${shape}).`);
    if (month !== undefined && !/^(0[1-9]|1[0-2])$/.test(month)) {
      throw new UsageError(`${folder}/: ${month} is not a month, 01 to 12 (${shape}).`);
    }
    if (month === undefined) {
      filters.startDate = `${year}0101`;
      filters.endDate = `${year}1231`;
    } else {
      const days = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
      filters.startDate = `${year}${month}01`;
      filters.endDate = `${year}${month}${days}`;
    }
  }
  return filters;
}

/** The one-line refusal of a glob, with the filters that select the same files where the pattern says. */
function globRefusal(pattern: string): UsageError {
  const segments = pattern.split('/');
  const name = segments[segments.length - 1] ?? '';
  const parts = name.split('_');
  const known = (value: string | undefined) => (value && !GLOB.test(value) ? value : undefined);
  const inFolders = segments[0] === MISSION && segments.length > 2;
  const inName = parts[0] === MISSION;
  const flags: string[] = [];
  const instrument = (inFolders ? known(segments[1]) : undefined) ?? (inName ? known(parts[1]) : undefined);
  const level = (inFolders ? known(segments[2]) : undefined) ?? (inName ? known(parts[2]) : undefined);
  if (instrument && instrument !== ANCILLARY_FOLDER) flags.push(`--instrument ${instrument}`);
  if (level && instrument !== ANCILLARY_FOLDER) flags.push(`--data-level ${level}`);
  const descriptor = known(parts[3]);
  if (inName && descriptor) flags.push(`--descriptor ${descriptor}`);
  const example =
    flags.length > 0
      ? `mission-data download ${flags.join(' ')}`
      : 'mission-data download --instrument mag --data-level l2 --start-date 20250101 --end-date 20250131';
  return new UsageError(
    `${JSON.stringify(pattern)} is a pattern, and the archive matches none: select files with query options instead, e.g. ${example}.`,
  );
}
