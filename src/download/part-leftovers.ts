/**
 * What other runs left beside a destination: their parts (`<name>.part.<pid>`) and the records that say what
 * each holds, and whether the process that wrote one still works on it.
 */
import { constants } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { NO_FOLLOW } from './local-root.js';

/** What a part holds, kept beside it so a later run can resume it. */
export interface PartRecord {
  /** The object's ETag when the part was started; a resume asks for the same one (If-Match). */
  etag: string | undefined;
  /** The object's size, once known. */
  size: number | undefined;
  /** Bytes of the object on disk from byte 0 (undefined: the part's length says it). */
  written?: number | undefined;
  /** Byte ranges `[start, end)` beyond `written` also on disk: parts fetched in parallel finish out of order. */
  parts?: Array<[number, number]> | undefined;
  /** Which process wrote it last, and where. */
  pid: number;
  host: string;
}

/** A part left unchanged this long by an owner that seems alive is taken for abandoned (a reused pid). */
const ABANDONED_AFTER_MS = 60_000;
/** The record kept beside a part. */
export function recordPath(partPath: string): string {
  return `${partPath}.json`;
}

/** True when process `pid` of this host is alive (EPERM: alive, but another user's). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The ranges of a record that can be true of a part of `length` bytes: well-formed, after `written` and not
 * touching it (the first missing byte comes before them), within the part, in order and apart. Anything else
 * is dropped (fetched again); the checksum checks the whole in any case.
 */
export function finishedRanges(
  parts: unknown,
  written: number,
  length: number,
): Array<[number, number]> | undefined {
  if (!Array.isArray(parts)) return undefined;
  const kept: Array<[number, number]> = [];
  let after = written;
  for (const range of parts) {
    if (!Array.isArray(range) || range.length !== 2) continue;
    const [start, end] = range as unknown[];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) continue;
    const [from, to] = [start as number, end as number];
    if (from <= after || to <= from || to > length) continue;
    kept.push([from, to]);
    after = to;
  }
  return kept.length > 0 ? kept : undefined;
}

async function readRecord(partPath: string): Promise<PartRecord | undefined> {
  try {
    const data = JSON.parse(
      await readFile(recordPath(partPath), { encoding: 'utf8', flag: constants.O_RDONLY | NO_FOLLOW }),
    ) as PartRecord;
    return typeof data === 'object' && data !== null ? data : undefined;
  } catch {
    return undefined;
  }
}

/** A leftover part in the destination's folder. */
export interface Leftover {
  path: string;
  pid: number;
  record: PartRecord | undefined;
}

/**
 * The parts other runs left beside `destination`. `folderNames` is the folder's listing when the caller has it
 * (a batch lists each folder once: one listing per file would cost a batch of many small files dearly).
 */
export async function leftovers(destination: string, folderNames?: ReadonlySet<string>): Promise<Leftover[]> {
  const folder = dirname(destination);
  const prefix = `${basename(destination)}.part.`;
  let names: Iterable<string>;
  try {
    names = folderNames ?? (await readdir(folder));
  } catch {
    return [];
  }
  const found: Leftover[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    if (!/^\d+$/.test(rest)) continue;
    const path = join(folder, name);
    found.push({ path, pid: Number(rest), record: await readRecord(path) });
  }
  return found;
}

/** Whether the owner of a leftover still works on it. */
export async function ownerAlive(leftover: Leftover): Promise<boolean> {
  const here = hostname();
  const sameHost = leftover.record === undefined || leftover.record.host === here;
  if (leftover.pid === process.pid && sameHost) return false;
  if (sameHost && !processAlive(leftover.pid)) return false;
  // A live pid may be a reused one, and another host's process cannot be asked: a part nobody has written
  // to for a while is abandoned.
  const stats = await stat(leftover.path).catch(() => undefined);
  return stats !== undefined && Date.now() - stats.mtimeMs < ABANDONED_AFTER_MS;
}
