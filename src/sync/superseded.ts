/**
 * The local versions a newer version held supersedes, found on disk at the end of a run: within the filter set,
 * among the files the record of verified downloads vouches for (never a file put there by other means).
 */

import { lstatSync } from 'node:fs';
import type { DataRoot } from '../data-root/index.js';
import { compareVersions } from '../naming/versions.js';
import type { LocalFiles } from './local-files.js';
import type { Versioned } from './newest.js';

/** One superseded version held: its storage path and where it is. */
export interface SupersededFile {
  path: string;
  localPath: string;
}

/**
 * The versions among the run's listing of the data root (`LocalFiles`: the filter set's scope, ingestion dates and
 * version left aside) that a newer version of the same product and day supersedes, both vouched for by the record
 * of verified downloads, by path.
 */
export async function findSuperseded(root: DataRoot, local: LocalFiles): Promise<SupersededFile[]> {
  // Only the days of several versions matter: only their files are looked at, and their lines of the record parsed.
  const days = daysOfSeveralVersions(local.entries.values());
  const record = await root.readVerified(days.flatMap((versions) => versions.map((file) => file.path)));
  // One look at each, on this thread: a hand-over to the thread pool per file costs several times the look.
  const vouched = (localPath: string, path: string) => {
    try {
      return record.matches(path, lstatSync(localPath));
    } catch {
      return false;
    }
  };
  const found: SupersededFile[] = [];
  for (const versions of days) {
    // Newest first; versions that compare equal in the order of their paths (the first is taken as the newest).
    versions.sort((a, b) => compareVersions(b.version, a.version) || byPath(a, b));
    const [newest, ...rest] = versions as [Versioned, ...Versioned[]];
    if (!vouched(local.localPath(newest.path), newest.path)) continue;
    for (const file of rest) {
      const localPath = local.localPath(file.path);
      if (vouched(localPath, file.path)) found.push({ path: file.path, localPath });
    }
  }
  return found.sort(byPath);
}

/** The versions of each product and day that has more than one among `files`. */
function daysOfSeveralVersions(files: Iterable<Versioned | undefined>): Versioned[][] {
  const first = new Map<string, Versioned>();
  const several = new Map<string, Versioned[]>();
  for (const file of files) {
    if (!file) continue;
    const other = first.get(file.key);
    if (other === undefined) first.set(file.key, file);
    else {
      const versions = several.get(file.key);
      if (versions) versions.push(file);
      else several.set(file.key, [other, file]);
    }
  }
  return [...several.values()];
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
