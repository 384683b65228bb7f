/**
 * The files of a data root within the scope of some filters: each read by the naming rules from its path, or
 * kept with the reason its name or place breaks them. Nothing is written; a missing root holds no files.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { isPartName } from '../data-root/index.js';
import { type MissionFile, parsePath } from '../naming/names.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { folderInRange, KIND_FOLDERS, matchesFilters, scopeFolders } from './scope.js';

/** A file found in the data root. */
export interface LocalEntry {
  /** The path below the data root, with `/` (the storage path, for a file in its place). */
  path: string;
  /** The absolute local path. */
  localPath: string;
  /** The file the name and place say, when they follow the naming rules. */
  file?: MissionFile | undefined;
  /** Why the name or place breaks the naming rules, when it does. */
  problem?: string | undefined;
  /** For an entry that is no regular file: what it is (`a FIFO`, `a symbolic link`…). */
  irregular?: string | undefined;
}

/**
 * The files of `root` the filters select, and every file in their folders whose name or place breaks the naming
 * rules. Hidden entries (the `.mission-data` state folder) and download part files are left out; links are not
 * followed.
 */
export async function scanLocalCopy(root: string, filters: QueryFilters): Promise<LocalEntry[]> {
  const found: LocalEntry[] = [];
  await walkScope(root, filters, (segments, entry) =>
    found.push(localEntryOf(root, segments.join('/'), entry)),
  );
  return found
    .filter((entry) => entry.file === undefined || matchesFilters(entry.file, filters))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The entries `scanLocalCopy` finds, handed to `take` as they are found (in no order) by their paths below the root
 * and the files they are (undefined for an entry that is no regular file or breaks the naming rules; its entry
 * says what it is, see `localEntryOf`), without their local paths or the reasons: over 100,000 files, no list of
 * them is made and nothing kept but what `take` keeps.
 */
export async function listLocalCopy(
  root: string,
  filters: QueryFilters,
  take: (path: string, file: MissionFile | undefined, entry: Dirent) => void,
): Promise<void> {
  await walkScope(root, filters, (segments, entry) => {
    const path = segments.join('/');
    const file = entry.isFile() ? readFile(path) : undefined;
    // The file's path is the one joined here: that string is kept rather than both.
    if (file === undefined) take(path, undefined, entry);
    else if (matchesFilters(file, filters)) take(file.path, file, entry);
  });
}

/**
 * Folders read at once: enough to hide a network file system's latency. Reading every folder at once, the entries
 * of hundreds of folders waited in memory for their turn (20 MiB over 100,000 files).
 */
const FOLDERS_AT_ONCE = 16;

/**
 * Reads the folders of `root` that can hold files the filters select, handing every entry in them that is no folder
 * to `take` (see `scanLocalCopy`).
 */
async function walkScope(
  root: string,
  filters: QueryFilters,
  take: (segments: string[], entry: Dirent) => void,
): Promise<void> {
  const reads = new Slots(FOLDERS_AT_ONCE);
  const visit = async (segments: string[]): Promise<void> => {
    if (!folderInRange(segments, filters)) return;
    let entries: Dirent[];
    await reads.take();
    try {
      entries = await readdir(join(root, ...segments), { withFileTypes: true });
    } catch {
      return;
    } finally {
      reads.give();
    }
    const folders: Promise<void>[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.') || isPartName(entry.name)) continue;
      const path = [...segments, entry.name];
      // Files of other kinds (ancillary, SPICE, quicklooks…) live in folders of their own; a scan of every
      // instrument's science leaves them out.
      if (segments.length === 1 && KIND_FOLDERS.includes(entry.name)) continue;
      if (entry.isDirectory()) folders.push(visit(path));
      else take(path, entry);
    }
    await Promise.all(folders);
  };
  await Promise.all(scopeFolders(filters).map((segments) => visit(segments)));
}

/** A count of things allowed at once: `take` waits for one of them to be given back when all are taken. */
class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(count: number) {
    this.#free = count;
  }

  async take(): Promise<void> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Gives a slot back: to the first waiting, if any. */
  give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free += 1;
  }
}

/** The entry `entry` at `path` below `root` (the path joined with `/`), read by the naming rules. */
export function localEntryOf(root: string, path: string, entry: Dirent): LocalEntry {
  const localPath = join(root, ...path.split('/'));
  if (!entry.isFile()) {
    const what = kindOf(entry);
    return { path, localPath, problem: `not a regular file (${what})`, irregular: what };
  }
  try {
    return { path, localPath, file: parsePath(path) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { path, localPath, problem: error.problems.join(' ') };
  }
}

/** The file a regular file's path below the root says; undefined when the path breaks the naming rules. */
function readFile(path: string): MissionFile | undefined {
  try {
    return parsePath(path);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return undefined;
  }
}

/** What an entry that is no regular file is, in words. */
function kindOf(entry: Dirent): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a FIFO';
  if (entry.isSocket()) return 'a socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'a device';
  return 'not a file';
}
