/**
 * What the arguments of a download name, read as a person means them: a storage path or name as it is,
 * a path inside the data root (`./data/imap/…`, absolute or relative) as the storage path it holds, a folder
 * of the layout (`imap/mag/l2/2025/01/`) as the query its folders spell, and a glob (`*`, `?`, `[...]` in a name
 * or a layout path) as the query of its fixed parts, whose answer it then sorts. On Windows a `\` separates
 * folders as `/` does (cmd and PowerShell complete paths with it); elsewhere it stays a character, which the
 * storage-path rules refuse.
 */
import { UsageError } from '../core/errors.js';
import { LOCAL_PATHS, type PathRules, withForwardSlashes } from '../core/platform-paths.js';
import { type ArchiveGlob, isGlob, readGlob } from './glob.js';
import { isInside } from './layout.js';
import { ANCILLARY_FOLDER, MISSION } from './mission.js';
import type { QueryFilters } from './query-vocabulary.js';
import { SPICE_FOLDERS } from './spice.js';

/**
 * Files named one by one (and globs, each listed by a query of its fixed parts), or one folder of the layout
 * with the filters that select what it holds.
 */
export type DownloadTargets =
  | { kind: 'files'; paths: string[]; globs: ArchiveGlob[] }
  | { kind: 'folder'; folder: string; filters: QueryFilters };

/**
 * Reads the targets of `download` (local paths under `rules`, this system's unless a test gives others); throws a
 * `UsageError` for a folder the layout has not, or a glob too broad.
 */
export function readTargets(
  paths: readonly string[],
  dataDir: string,
  cwd = process.cwd(),
  rules: PathRules = LOCAL_PATHS,
): DownloadTargets {
  const storage = paths.map((given) => storagePathOf(given, { dataDir, cwd, rules }));
  const globs: ArchiveGlob[] = [];
  for (const [at, entry] of storage.entries()) {
    if (!isGlob(entry.path)) continue;
    // A glob names files unless it ends with '/' (its last part without a '.' is a pattern of names).
    if (withForwardSlashes(paths[at] ?? '', rules).endsWith('/')) {
      throw new UsageError(
        `${JSON.stringify(paths[at])} is a glob of folders: end it with a pattern of names, such as ${entry.path}/*.`,
      );
    }
    globs.push(readArchiveGlob(entry.path, paths[at] ?? entry.path));
  }
  const plain = storage.filter((entry) => !isGlob(entry.path));
  // A folder of SPICE kernels is the glob of its files: kernels of several types share a folder, and the glob's
  // test keeps the folder's own.
  for (const entry of plain) {
    if (entry.folder && isSpiceFolder(entry.path)) {
      checkSpiceFolder(entry.path);
      globs.push(readArchiveGlob(`${entry.path}/*`, `${entry.path}/`));
      entry.spice = true;
    }
  }
  const folders = plain.filter((entry) => entry.folder && !entry.spice);
  if (folders.length === 0) {
    return { kind: 'files', paths: plain.filter((entry) => !entry.folder).map((entry) => entry.path), globs };
  }
  if (storage.length > 1) {
    throw new UsageError(
      `Give one folder at a time, without other paths (got ${storage.length} targets, ${folders.length} of them folders).`,
    );
  }
  const folder = storage[0]?.path ?? '';
  return { kind: 'folder', folder: `${folder}/`, filters: folderFilters(folder) };
}

/** A target's storage path, whether it names a folder, and whether that folder holds SPICE kernels. */
interface StoragePath {
  path: string;
  folder: boolean;
  spice?: boolean;
}

/** True when a folder (without its trailing `/`) is `imap/spice` or one below it. */
function isSpiceFolder(folder: string): boolean {
  const [mission, second] = folder.split('/');
  return mission === MISSION && second === 'spice';
}

/** Refuses a folder below `imap/spice/` that is none of the kernel folders. */
function checkSpiceFolder(folder: string): void {
  const [, , kernels, ...rest] = folder.split('/');
  if (kernels === undefined || ((SPICE_FOLDERS as readonly string[]).includes(kernels) && rest.length === 0))
    return;
  throw new UsageError(
    `${folder}/ is not a folder of SPICE kernels: they lie in imap/spice/<kernel folder>/, one of ${SPICE_FOLDERS.join(', ')}.`,
  );
}

/** Where a target's local path is read: the data root, the working directory, the system's path rules. */
interface LocalPlace {
  dataDir: string;
  cwd: string;
  rules: PathRules;
}

/** The storage path a target names, and whether it names a folder. */
function storagePathOf(given: string, { dataDir, cwd, rules }: LocalPlace): StoragePath {
  const typed = withForwardSlashes(given, rules);
  let path = typed;
  const first = typed.split('/')[0] ?? '';
  const local =
    rules.isAbsolute(typed) || first === '.' || first === '..' || (typed.includes('/') && first !== MISSION);
  if (local) {
    const absolute = rules.resolve(cwd, typed);
    const root = rules.resolve(dataDir);
    if (!isInside(root, absolute, rules)) {
      // A relative path of another form is left to the storage-path rules, which say what is wrong with it.
      if (rules.isAbsolute(typed) || first === '.' || first === '..') {
        throw new UsageError(
          `${given} is not inside the data root ${root}: give a storage path (imap/<instrument>/…), a file name, or a path below the data root.`,
        );
      }
      return { path: typed, folder: false };
    }
    if (absolute === root) {
      throw new UsageError(
        `${given} is the data root itself: give a folder below it (such as imap/mag/l2/2025/01/) or query options.`,
      );
    }
    path = rules.relative(root, absolute).split(rules.sep).join('/');
    if (typed.endsWith('/')) path += '/';
  }
  const trimmed = path.replace(/\/+$/, '');
  const segments = trimmed.split('/');
  const last = segments[segments.length - 1] ?? '';
  const isFolder = path.endsWith('/') || (segments[0] === MISSION && !last.includes('.'));
  return { path: isFolder ? trimmed : path, folder: isFolder };
}

/** The layout's folders, for messages. */
const FOLDER_SHAPES =
  'imap/<instrument>/<data_level>/<year>/<month>/, imap/ancillary/<instrument>/ or imap/spice/<kernel folder>/';

/**
 * The filters a folder of the layout spells: `imap/<instrument>[/<level>[/<year>[/<month>]]]` or
 * `imap/ancillary/<instrument>`. (A folder of SPICE kernels is read as the glob of its files.)
 */
export function folderFilters(folder: string): QueryFilters {
  const [mission, instrument, level, year, month, ...rest] = folder.split('/');
  const shape = 'imap/<instrument>/<data_level>/<year>/<month>/';
  if (mission !== MISSION || instrument === undefined || rest.length > 0) {
    throw new UsageError(`${folder}/ is not a folder of the layout (${FOLDER_SHAPES}).`);
  }
  if (instrument === ANCILLARY_FOLDER) return ancillaryFolderFilters(folder, level, year);
  const unlisted = UNLISTED_FOLDERS[instrument];
  if (unlisted !== undefined) {
    throw new UsageError(
      `${folder}/ holds ${unlisted}, which the archive's query does not list: download them by name or by storage path.`,
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

/** Folders below the mission folder whose files the query does not list, with what they hold. */
const UNLISTED_FOLDERS: Record<string, string> = {
  quicklook: 'quicklooks',
  dependency: 'dependency files',
  release: 'release manifests',
};

/** The filters of `imap/ancillary/<instrument>`: the folder holds that instrument's ancillary files. */
function ancillaryFolderFilters(
  folder: string,
  instrument: string | undefined,
  below: string | undefined,
): QueryFilters {
  if (instrument === undefined || below !== undefined) {
    throw new UsageError(
      `${folder}/: ancillary files lie in one folder per instrument, imap/ancillary/<instrument>/; give one of those.`,
    );
  }
  return { table: 'ancillary', instrument };
}

/**
 * A glob read, refused when no query lists what it names (quicklooks …) or its fixed parts pin down neither an
 * instrument nor a table (it would list the whole archive).
 */
function readArchiveGlob(pattern: string, given: string): ArchiveGlob {
  const glob = readGlob(pattern);
  if (glob.unlisted !== undefined) throw new UsageError(`${JSON.stringify(given)}: ${glob.unlisted}.`);
  if (glob.queries.length === 0) {
    throw new UsageError(
      `${JSON.stringify(given)} can match no file of the archive: no kind of file has its folders and its ending.`,
    );
  }
  if (glob.filters.instrument === undefined && glob.filters.table === undefined) {
    throw new UsageError(
      `${JSON.stringify(given)} does not say which instrument: begin the glob with the fixed parts of the names (imap_mag_l2_*_202501*) or of the folders (imap/mag/l2/2025/01/*.cdf), end a glob of SPICE kernels with their extension (naif*.tls), or select files with query options.`,
    );
  }
  return glob;
}
