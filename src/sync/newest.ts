/**
 * The newest version of each product and start day, worked out locally from what is held and what the archive
 * offered, rather than by the archive's `latest` on a query of new files only: such a query sees only the new
 * files, so an older version ingested late would look like the latest one.
 */

import { dayKey } from '../coverage/run.js';
import { locateFile } from '../naming/layout.js';
import type { MissionFile } from '../naming/names.js';
import { compareVersions } from '../naming/versions.js';

/** What to do with the files the archive offered. */
export interface NewestChoice {
  /** Offered files to fetch: the newest version of their product and day, not held yet. */
  fetch: string[];
  /** Offered files left alone: a newer version is held or offered. */
  older: string[];
}

/** What choosing the newest version needs of a file: its storage path, its product and day (`dayKey`), its version. */
export interface Versioned {
  path: string;
  key: string;
  version: string;
}

/** The version of the file a storage path names; undefined for a path of a naming form this version does not read. */
export function versionOf(path: string): Versioned | undefined {
  let located: ReturnType<typeof locateFile>;
  try {
    located = locateFile(path);
  } catch {
    return undefined;
  }
  return located.kind === 'unchecked' ? undefined : versioned(located);
}

/** What choosing the newest version needs of `file`. */
export function versioned(file: MissionFile): Versioned {
  return { path: file.path, key: dayKey(file), version: file.version };
}

/** How a storage path is read: `versionOf`, or a reading of the same paths done once already. */
export type VersionOf = (path: string) => Versioned | undefined;

/**
 * Of the `offered` files, those to fetch: for each product (instrument, level, descriptor) and start date, the
 * highest version among `held` and `offered`, when it is not held. A file of a naming form this version does not
 * read stands alone (it is fetched when not held). `read` reads the paths.
 */
export function chooseNewest(
  held: Iterable<string>,
  offered: Iterable<string>,
  read: VersionOf = versionOf,
): NewestChoice {
  const heldSet = new Set(held);
  const offeredFiles: Array<{ path: string; file: Versioned | undefined }> = [];
  for (const path of new Set(offered)) offeredFiles.push({ path, file: read(path) });
  // Only the products and days offered are decided: the held files of others are passed over.
  const offeredKeys = new Set(offeredFiles.flatMap(({ file }) => (file ? [file.key] : [])));
  const newest = new Map<string, Versioned>();
  const consider = (file: Versioned) => {
    const current = newest.get(file.key);
    if (!current || compareVersions(file.version, current.version) > 0) newest.set(file.key, file);
  };
  if (offeredKeys.size > 0) {
    for (const path of heldSet) {
      const file = read(path);
      if (file && offeredKeys.has(file.key)) consider(file);
    }
  }
  for (const { file } of offeredFiles) if (file) consider(file);
  const choice: NewestChoice = { fetch: [], older: [] };
  for (const { path, file } of offeredFiles) {
    if (heldSet.has(path)) continue;
    if (!file || newest.get(file.key)?.path === path) choice.fetch.push(path);
    else choice.older.push(path);
  }
  return choice;
}

/**
 * The files among `paths` that a higher version of the same product and day, also among them, supersedes.
 * `read` reads the paths.
 */
export function superseded(paths: Iterable<string>, read: VersionOf = versionOf): string[] {
  const files: Versioned[] = [];
  for (const path of new Set(paths)) {
    const file = read(path);
    if (file) files.push(file);
  }
  const newest = new Map<string, Versioned>();
  for (const file of files) {
    const current = newest.get(file.key);
    if (!current || compareVersions(file.version, current.version) > 0) newest.set(file.key, file);
  }
  return files.filter((file) => newest.get(file.key) !== file).map((file) => file.path);
}
