/**
 * The local versions a newer version held supersedes, found on disk at the end of a run: within the filter set,
 * among the files the record of verified downloads vouches for (never a file put there by other means).
 */

import { lstat } from 'node:fs/promises';
import { dayKey, scanLocalCopy } from '../coverage/run.js';
import type { DataRoot } from '../data-root/index.js';
import { resolveLocalPath } from '../naming/layout.js';
import type { MissionFile } from '../naming/names.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { compareVersions } from '../naming/versions.js';

/** One superseded version held: its storage path and where it is. */
export interface SupersededFile {
  path: string;
  localPath: string;
}

/**
 * The held versions of `filters`' scope (ingestion dates and version left aside) that a newer held version of the
 * same product and day supersedes, both vouched for by the record of verified downloads, by path.
 */
export async function findSuperseded(
  root: DataRoot,
  dataDir: string,
  filters: QueryFilters,
): Promise<SupersededFile[]> {
  const { ingestionStartDate: _start, ingestionEndDate: _end, version: _version, ...scope } = filters;
  const local = await scanLocalCopy(dataDir, scope);
  const byDay = new Map<string, MissionFile[]>();
  for (const entry of local) {
    if (!entry.file) continue;
    const key = dayKey(entry.file);
    const list = byDay.get(key);
    if (list) list.push(entry.file);
    else byDay.set(key, [entry.file]);
  }
  // Only the lines of the files found here are parsed.
  const record = await root.readVerified(local.map((entry) => entry.path));
  const vouched = async (file: MissionFile) => {
    const stats = await lstat(resolveLocalPath(dataDir, file)).catch(() => undefined);
    return stats !== undefined && record.matches(file.path, stats);
  };
  const found: SupersededFile[] = [];
  for (const versions of byDay.values()) {
    if (versions.length < 2) continue;
    versions.sort((a, b) => compareVersions(b.version, a.version));
    const [newest, ...rest] = versions as [MissionFile, ...MissionFile[]];
    if (!(await vouched(newest))) continue;
    for (const file of rest) {
      if (await vouched(file)) found.push({ path: file.path, localPath: resolveLocalPath(dataDir, file) });
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
