/**
 * The status of a data root against the archive, within the scope of some filters: what is missing, what has a
 * newer version in the archive, what the archive does not hold, and what no longer holds its verified bytes.
 *
 * Each side is taken file by file and kept only as the comparison needs it (the archive's files as a path, a
 * product and day and a version, the root's as a path), and the record of verified downloads is read once the
 * files to check are known: over 100,000 files neither a list of parsed names nor the archive's records are
 * held, nor the record beside the archive's side.
 */
import type { Dirent } from 'node:fs';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { runPool } from '../core/batch.js';
import type { VerifiedRecord } from '../data-root/index.js';
import { resolveLocalPath } from '../naming/layout.js';
import type { MissionFile } from '../naming/names.js';
import { compareVersions } from '../naming/versions.js';
import { checkAgainstRecord } from './changed.js';
import { type LocalEntry, localEntryOf } from './local-copy.js';
import { byPath, dayKey } from './products.js';
import type { StatusEntry, StatusKind, StatusReport } from './types.js';

/** Local files hashed at once when their stats no longer match their record. */
const HASH_CONCURRENCY = 4;
/** Local files whose stats are compared with their record between two turns of the event loop. */
const LOOKS_PER_TURN = 1024;

/** A file as the comparison keeps it: its path, its product and day (`dayKey`) and its version. */
interface KeptFile {
  path: string;
  key: string;
  version: string;
}

function kept(file: MissionFile): KeptFile {
  return { path: file.path, key: dayKey(file), version: file.version };
}

/** The archive's side of a status (every version of the scope), taken file by file as its pages come. */
export class ArchiveSide {
  /** Every file the archive holds, by storage path. */
  readonly byPath = new Map<string, KeptFile>();
  /** The latest version of each product and day, the first of equal ones in the order the archive gave them. */
  readonly latest = new Map<string, KeptFile>();
  /** How many files the archive gave. */
  files = 0;

  add(file: MissionFile): void {
    this.files += 1;
    const next = kept(file);
    const held = this.latest.get(next.key);
    // Versions of one day share the key's text: one string for each day, however many versions it has.
    if (held) next.key = held.key;
    this.byPath.set(next.path, next);
    if (!held || compareVersions(next.version, held.version) > 0) this.latest.set(next.key, next);
  }
}

/**
 * The data root's side of a status, taken entry by entry as a listing finds them (see `listLocalCopy`). A file
 * named by the rules is compared as the archive's record of its path (the same path names the same product, day
 * and version): the archive's file when the archive's side holds it already, its path until then (and for good
 * when the archive does not hold it). Both sides are taken at once, so most files the root holds keep no text
 * of their own.
 */
export class LocalSide {
  /** The files named by the rules, in the scope, in the order found: the archive's, or the storage path. */
  readonly files: Array<KeptFile | string> = [];
  /** The entries whose name or place breaks the rules, or that are no regular file. */
  readonly others: LocalEntry[] = [];

  constructor(
    readonly root: string,
    readonly archive: ArchiveSide,
  ) {}

  add(path: string, file: MissionFile | undefined, entry: Dirent): void {
    if (file) this.files.push(this.archive.byPath.get(file.path) ?? file.path);
    else this.others.push(localEntryOf(this.root, path, entry));
  }
}

/** What the comparison of both sides found before the held files are checked against the record. */
export interface StatusComparison {
  /** The differences found (`extra`, `missing`, `outdated`), in no order. */
  entries: StatusEntry[];
  /** The local files the archive holds, to check against the record of verified downloads. */
  held: readonly KeptFile[];
  archiveFiles: number;
  currentFiles: number;
}

/**
 * Compares the data root's files in scope with the archive's (every version of the scope): the archive's latest
 * version of a day the root has no version of is `missing`; a root whose highest version of a day (among those
 * the archive holds) is older than the archive's latest is `outdated`; a local file the archive does not hold,
 * or whose name or place breaks the rules, is `extra`. What is `changed` is told by `checkHeld`.
 */
export function compareSides(archive: ArchiveSide, local: LocalSide): StatusComparison {
  const { extra, held, blocked } = separateExtra(archive.byPath, local);
  return {
    entries: [...extra, ...versionEntries(archive.latest, held, blocked, local.root)],
    held,
    archiveFiles: archive.files,
    currentFiles: archive.latest.size,
  };
}

/**
 * The status report: the comparison, with the held files whose bytes no longer match the download record
 * (`changed`).
 */
export async function checkHeld(
  comparison: StatusComparison,
  options: { dataDir: string; record: VerifiedRecord; signal?: AbortSignal | undefined },
): Promise<StatusReport> {
  const { changed, unrecorded } = await findChanged(comparison.held, options);
  // A file both changed and outdated is listed changed first, as the two lists were joined.
  const entries = [...changed, ...comparison.entries];
  entries.sort((a, b) => byPath(a, b) || kindOrder(a) - kindOrder(b));
  const counts: Record<StatusKind, number> = { missing: 0, outdated: 0, extra: 0, changed: 0 };
  for (const entry of entries) counts[entry.status] += 1;
  return {
    inStep: entries.length === 0,
    entries,
    counts,
    localFiles: comparison.held.length,
    unrecorded,
    archiveFiles: comparison.archiveFiles,
    currentFiles: comparison.currentFiles,
    currentHere: comparison.currentFiles - counts.missing - counts.outdated,
  };
}

/** The order of the entries of one path: extra, changed, then missing or outdated. */
function kindOrder(entry: StatusEntry): number {
  return entry.status === 'extra' ? 0 : entry.status === 'changed' ? 1 : 2;
}

/**
 * The local entries that are `extra` (named against the rules, or not in the archive), the files the archive
 * holds, and what is no regular file at the place of an archive's file (that file is `missing`, once, saying what
 * is there).
 */
function separateExtra(
  archiveFiles: ReadonlyMap<string, KeptFile>,
  local: LocalSide,
): { extra: StatusEntry[]; held: KeptFile[]; blocked: Map<string, LocalEntry> } {
  const extra: StatusEntry[] = [];
  const held: KeptFile[] = [];
  const blocked = new Map<string, LocalEntry>();
  for (const entry of local.others) {
    if (entry.irregular && archiveFiles.has(entry.path)) blocked.set(entry.path, entry);
    else {
      const reason = entry.problem ?? 'breaks the naming rules';
      extra.push({ status: 'extra', path: entry.path, localPath: entry.localPath, reason });
    }
  }
  for (const found of local.files) {
    const path = typeof found === 'string' ? found : found.path;
    const file = typeof found === 'string' ? archiveFiles.get(path) : found;
    if (file) held.push(file);
    else
      extra.push({
        status: 'extra',
        path,
        localPath: localPathOf(local.root, path),
        reason: 'not in the archive',
      });
  }
  return { extra, held, blocked };
}

/** Where a file the listing found is: the root and the path's segments joined, as the listing joins them. */
function localPathOf(root: string, path: string): string {
  return join(root, ...path.split('/'));
}

/**
 * The held files whose bytes no longer match the download record, in the order held, and how many it lacks. The
 * stats of each are compared with its record here, one after another without a hand-over to the thread pool
 * (which cost several times the look); the files whose stats differ, or that the record does not vouch for, are
 * checked by `checkAgainstRecord`, a few at a time.
 */
async function findChanged(
  held: readonly KeptFile[],
  options: { dataDir: string; record: VerifiedRecord; signal?: AbortSignal | undefined },
): Promise<{ changed: StatusEntry[]; unrecorded: number }> {
  const { record, dataDir } = options;
  const toCheck: number[] = [];
  for (const [index, file] of held.entries()) {
    if (index % LOOKS_PER_TURN === LOOKS_PER_TURN - 1) await new Promise((next) => setImmediate(next));
    if (!sameAsRecorded(record, file.path, localPathOf(dataDir, file.path))) toCheck.push(index);
  }
  let unrecorded = 0;
  const changed: Array<StatusEntry | undefined> = new Array(toCheck.length);
  await runPool(toCheck.length, HASH_CONCURRENCY, async (at) => {
    const { path } = held[toCheck[at] as number] as KeptFile;
    const localPath = localPathOf(dataDir, path);
    const check = await checkAgainstRecord(record, path, localPath, options.signal);
    if (check.kind === 'unrecorded') unrecorded += 1;
    if (check.kind === 'changed') changed[at] = { status: 'changed', path, localPath, reason: check.reason };
  });
  return { changed: changed.filter((entry) => entry !== undefined), unrecorded };
}

/**
 * True when the record vouches for the file at `localPath` (storage path `path`) and its stats are those recorded:
 * what `checkAgainstRecord` calls the same without reading it. Anything else, a look that fails included, is
 * left to `checkAgainstRecord`.
 */
function sameAsRecorded(record: VerifiedRecord, path: string, localPath: string): boolean {
  const entry = record.recorded(path);
  if (entry === undefined || entry.bad !== undefined) return false;
  try {
    const stats = lstatSync(localPath);
    return stats.size === entry.size && stats.mtimeMs === entry.mtimeMs && stats.ino === entry.ino;
  } catch {
    return false;
  }
}

/** The days the root lacks (`missing`) or holds only an older version of (`outdated`), against the archive's latest. */
function versionEntries(
  latest: ReadonlyMap<string, KeptFile>,
  held: readonly KeptFile[],
  blocked: ReadonlyMap<string, LocalEntry>,
  dataDir: string,
): StatusEntry[] {
  const entries: StatusEntry[] = [];
  const localLatest = latestByPath(held);
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
        localPath: resolveLocalPath(dataDir, here.path),
        newer: newest.path,
        reason: `the archive has ${newest.version}`,
      });
    }
  }
  return entries;
}

/** The highest version of each day key among `files`; of equal versions, the first by path. */
function latestByPath(files: Iterable<KeptFile>): Map<string, KeptFile> {
  const latest = new Map<string, KeptFile>();
  for (const file of files) {
    const held = latest.get(file.key);
    const order = held ? compareVersions(file.version, held.version) : 1;
    if (order > 0 || (order === 0 && held && file.path < held.path)) latest.set(file.key, file);
  }
  return latest;
}
