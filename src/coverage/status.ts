/**
 * The status of a data root against the archive, within the scope of some filters: what is missing, what has a
 * newer version in the archive, what the archive does not hold, and what no longer holds its verified bytes.
 */
import { runPool } from '../core/batch.js';
import type { VerifiedRecord } from '../data-root/index.js';
import { resolveLocalPath } from '../naming/layout.js';
import type { MissionFile } from '../naming/names.js';
import { compareVersions } from '../naming/versions.js';
import { checkAgainstRecord } from './changed.js';
import type { LocalEntry } from './local-copy.js';
import { byPath, latestByDay } from './products.js';
import type { StatusEntry, StatusKind, StatusReport } from './types.js';

/** Local files hashed at once when their stats no longer match their record. */
const HASH_CONCURRENCY = 4;

/** Options of a status: where the data root is, its download record, and the signal that stops the hashing. */
interface StatusOptions {
  dataDir: string;
  record: VerifiedRecord;
  signal?: AbortSignal | undefined;
}

/**
 * Compares the data root's files in scope with the archive's (every version of the scope): the archive's latest
 * version of a day the root has no version of is `missing`; a root whose highest version of a day (among those
 * the archive holds) is older than the archive's latest is `outdated`; a local file the archive does not hold,
 * or whose name or place breaks the rules, is `extra`; a file of the archive whose bytes no longer match the
 * download record is `changed`.
 */
export async function buildStatus(
  archive: readonly MissionFile[],
  local: readonly LocalEntry[],
  options: StatusOptions,
): Promise<StatusReport> {
  const { extra, held, blocked } = separateExtra(archive, local);
  const { changed, unrecorded } = await findChanged(held, options);
  const latest = latestByDay(archive);
  const entries = [...extra, ...changed, ...versionEntries(latest, held, blocked, options.dataDir)];
  entries.sort(byPath);
  const counts: Record<StatusKind, number> = { missing: 0, outdated: 0, extra: 0, changed: 0 };
  for (const entry of entries) counts[entry.status] += 1;
  return {
    inStep: entries.length === 0,
    entries,
    counts,
    localFiles: held.length,
    unrecorded,
    archiveFiles: archive.length,
    currentFiles: latest.size,
    currentHere: latest.size - counts.missing - counts.outdated,
  };
}

/**
 * The local files that are `extra` (named against the rules, or not in the archive), those the archive holds, and
 * what is no regular file at the place of an archive's file (that file is `missing`, once, saying what is there).
 */
function separateExtra(
  archive: readonly MissionFile[],
  local: readonly LocalEntry[],
): { extra: StatusEntry[]; held: LocalEntry[]; blocked: Map<string, LocalEntry> } {
  const archivePaths = new Set(archive.map((file) => file.path));
  const extra: StatusEntry[] = [];
  const held: LocalEntry[] = [];
  const blocked = new Map<string, LocalEntry>();
  for (const entry of local) {
    if (entry.irregular && archivePaths.has(entry.path)) {
      blocked.set(entry.path, entry);
    } else if (!entry.file) {
      extra.push({
        status: 'extra',
        path: entry.path,
        localPath: entry.localPath,
        reason: entry.problem ?? 'breaks the naming rules',
      });
    } else if (!archivePaths.has(entry.file.path)) {
      extra.push({
        status: 'extra',
        path: entry.path,
        localPath: entry.localPath,
        reason: 'not in the archive',
      });
    } else held.push(entry);
  }
  return { extra, held, blocked };
}

/** The held files whose bytes no longer match the download record, in the order held, and how many it lacks. */
async function findChanged(
  held: readonly LocalEntry[],
  options: StatusOptions,
): Promise<{ changed: StatusEntry[]; unrecorded: number }> {
  let unrecorded = 0;
  const changed: Array<StatusEntry | undefined> = new Array(held.length);
  await runPool(held.length, HASH_CONCURRENCY, async (index) => {
    const entry = held[index] as LocalEntry;
    const check = await checkAgainstRecord(options.record, entry.path, entry.localPath, options.signal);
    if (check.kind === 'unrecorded') unrecorded += 1;
    if (check.kind === 'changed') {
      changed[index] = {
        status: 'changed',
        path: entry.path,
        localPath: entry.localPath,
        reason: check.reason,
      };
    }
  });
  return { changed: changed.filter((entry) => entry !== undefined), unrecorded };
}

/** The days the root lacks (`missing`) or holds only an older version of (`outdated`), against the archive's latest. */
function versionEntries(
  latest: ReadonlyMap<string, MissionFile>,
  held: readonly LocalEntry[],
  blocked: ReadonlyMap<string, LocalEntry>,
  dataDir: string,
): StatusEntry[] {
  const entries: StatusEntry[] = [];
  const localLatest = latestByDay(held.map((entry) => entry.file as MissionFile));
  for (const [key, newest] of latest) {
    const here = localLatest.get(key);
    const inPlace = blocked.get(newest.path);
    if (!here && inPlace) {
      entries.push({
        status: 'missing',
        path: newest.path,
        localPath: inPlace.localPath,
        reason: `${inPlace.irregular} is in its place, not a regular file`,
      });
    } else if (!here) entries.push({ status: 'missing', path: newest.path });
    else if (compareVersions(here.version, newest.version) < 0) {
      entries.push({
        status: 'outdated',
        path: here.path,
        localPath: resolveLocalPath(dataDir, here),
        newer: newest.path,
        reason: `the archive has ${newest.version}`,
      });
    }
  }
  return entries;
}

/**
 * The storage paths a download fetches to bring the data root in step: `missing` files only, or (`update`) also
 * the newer versions of outdated files and the changed files again.
 */
export function statusTargets(report: StatusReport, mode: 'missing' | 'update'): string[] {
  const targets: string[] = [];
  for (const entry of report.entries) {
    if (entry.status === 'missing') targets.push(entry.path);
    else if (mode === 'update' && entry.status === 'outdated' && entry.newer) targets.push(entry.newer);
    else if (mode === 'update' && entry.status === 'changed') targets.push(entry.path);
  }
  return [...new Set(targets)];
}
