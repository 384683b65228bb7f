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

function missionFile(path: string): MissionFile | undefined {
  try {
    const located = locateFile(path);
    return located.kind === 'unchecked' ? undefined : located;
  } catch {
    return undefined;
  }
}

/**
 * Of the `offered` files, those to fetch: for each product (instrument, level, descriptor) and start date, the
 * highest version among `held` and `offered`, when it is not held. A file of a naming form this version does not
 * read stands alone (it is fetched when not held).
 */
export function chooseNewest(held: Iterable<string>, offered: Iterable<string>): NewestChoice {
  const heldSet = new Set(held);
  const newest = new Map<string, MissionFile>();
  const consider = (file: MissionFile) => {
    const key = dayKey(file);
    const current = newest.get(key);
    if (!current || compareVersions(file.version, current.version) > 0) newest.set(key, file);
  };
  for (const path of heldSet) {
    const file = missionFile(path);
    if (file) consider(file);
  }
  const offeredFiles: Array<{ path: string; file: MissionFile | undefined }> = [];
  for (const path of new Set(offered)) {
    const file = missionFile(path);
    offeredFiles.push({ path, file });
    if (file) consider(file);
  }
  const choice: NewestChoice = { fetch: [], older: [] };
  for (const { path, file } of offeredFiles) {
    if (heldSet.has(path)) continue;
    if (!file || newest.get(dayKey(file))?.path === path) choice.fetch.push(path);
    else choice.older.push(path);
  }
  return choice;
}

/** The files among `paths` that a higher version of the same product and day, also among them, supersedes. */
export function superseded(paths: Iterable<string>): string[] {
  const files = [...new Set(paths)].flatMap((path) => {
    const file = missionFile(path);
    return file ? [file] : [];
  });
  const newest = new Map<string, MissionFile>();
  for (const file of files) {
    const current = newest.get(dayKey(file));
    if (!current || compareVersions(file.version, current.version) > 0) newest.set(dayKey(file), file);
  }
  return files.filter((file) => newest.get(dayKey(file)) !== file).map((file) => file.path);
}
