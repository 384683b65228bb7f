/**
 * What the arguments of a download name, read as a person means them: a storage path or name as it is,
 * a path inside the data root (`./data/imap/…`, absolute or relative) as the storage path it holds, a folder
 * of the layout (`imap/mag/l2/2025/01/`) as the query its folders spell, and a glob (`*`, `?`, `[...]` in a name
 * or a layout path) as the query of its fixed parts, whose answer it then sorts.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';
import { type ArchiveGlob, isGlob, readGlob } from './glob.js';
import { isInside } from './layout.js';
import { ANCILLARY_FOLDER, MISSION } from './mission.js';
import type { QueryFilters } from './query-vocabulary.js';

/**
 * Files named one by one (and globs, each listed by a query of its fixed parts), or one folder of the layout
 * with the filters that select what it holds.
 */
export type DownloadTargets =
  | { kind: 'files'; paths: string[]; globs: ArchiveGlob[] }
  | { kind: 'folder'; folder: string; filters: QueryFilters };

/** Reads the targets of `download`; throws a `UsageError` for a folder the layout has not, or a glob too broad. */
export function readTargets(paths: readonly string[], dataDir: string, cwd = process.cwd()): DownloadTargets {
  const storage = paths.map((path) => storagePathOf(path, dataDir, cwd));
  const globs: ArchiveGlob[] = [];
  for (const [at, entry] of storage.entries()) {
    if (!isGlob(entry.path)) continue;
    // A glob names files unless it ends with '/' (its last part without a '.' is a pattern of names).
    if (paths[at]?.endsWith('/')) {
      throw new UsageError(
        `${JSON.stringify(paths[at])} is a glob of folders: end it with a pattern of names, such as ${entry.path}/*.`,
      );
    }
    globs.push(readArchiveGlob(entry.path, paths[at] ?? entry.path));
  }
  const plain = storage.filter((entry) => !isGlob(entry.path));
  const folders = plain.filter((entry) => entry.folder);
  if (folders.length === 0) return { kind: 'files', paths: plain.map((entry) => entry.path), globs };
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

/** A glob read, refused when its fixed parts pin down no instrument (it would list the whole archive). */
function readArchiveGlob(pattern: string, given: string): ArchiveGlob {
  const glob = readGlob(pattern);
  if (glob.filters.instrument === undefined && glob.filters.table === undefined) {
    throw new UsageError(
      `${JSON.stringify(given)} does not say which instrument: begin the glob with the fixed parts of the names (imap_mag_l2_*_202501*) or of the folders (imap/mag/l2/2025/01/*.cdf), or select files with query options.`,
    );
  }
  return glob;
}
