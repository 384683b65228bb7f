/**
 * What other runs left beside a destination: their parts (`<name>.part.<pid>`) and the records that say what
 * each holds, and whether the process that wrote one still works on it; and the claim of the part this process
 * writes (`claimPart`): a leftover of a dead process taken over to be resumed, or a new part made exclusively,
 * never through a symbolic link at its name and never in a folder swapped for one since the batch checked it
 * (see `download/batch/folders.ts`).
 */
import { closeSync, constants, fstatSync, lstatSync } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  type ChecksumAlgorithm,
  DIGEST_BYTES,
  type ExpectedChecksum,
} from '../../core/checksums/checksum.js';
import { LocalFileError } from '../../core/errors.js';
import { isThisHost } from '../../core/host-id.js';
import { openNoFollow, openNoFollowSync } from '../../core/no-follow.js';
import { processAlive } from '../../core/process-alive.js';
import { removeFile, replaceFile } from '../../core/replace-file.js';
import { localError, PartFiles, type PartPaths } from '../../data-root/index.js';

/** A part another live process is writing. */
export class PartBusy extends Error {
  constructor(
    readonly pid: number,
    readonly path: string,
  ) {
    super(`another download of this file is in progress (process ${pid}, ${path})`);
  }
}

/** The other download runs working in the data root, as a claim asks for them (see `DataRoot.joinRuns`). */
export interface OtherRuns {
  /** Their pids as last seen, without a look. */
  seen(): readonly number[];
  /** Their pids now: one look at the runs' folder. */
  look(): readonly number[];
}

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
  /**
   * The checksum the store stated for the whole object (S3 states `x-amz-checksum-*` on a whole-object answer
   * only): a resumed part whose later answers state none is still checked against it.
   */
  checksum?: RecordedChecksum | undefined;
  /**
   * Which process wrote it last, and on which machine: the host id (`core/host-id.ts`), or the host name in
   * records of versions before it.
   */
  pid: number;
  host: string;
}

/** A stated checksum as a record keeps it: the digest in base64. */
export interface RecordedChecksum {
  algorithm: ChecksumAlgorithm;
  digest: string;
  /** The header it came from, for messages. */
  source: string;
}

/** The checksum as a record keeps it. */
export function toRecorded(expected: ExpectedChecksum | undefined): RecordedChecksum | undefined {
  return expected === undefined
    ? undefined
    : { algorithm: expected.algorithm, digest: expected.digest.toString('base64'), source: expected.source };
}

/** The checksum a record keeps; undefined when it keeps none or one that cannot be true (see `validRecord`). */
export function fromRecorded(recorded: unknown): ExpectedChecksum | undefined {
  if (typeof recorded !== 'object' || recorded === null) return undefined;
  const { algorithm, digest, source } = recorded as Record<string, unknown>;
  if (typeof algorithm !== 'string' || !Object.hasOwn(DIGEST_BYTES, algorithm)) return undefined;
  if (typeof digest !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(digest)) return undefined;
  if (typeof source !== 'string' || source.length === 0 || source.length > 64) return undefined;
  const bytes = Buffer.from(digest, 'base64');
  const known = algorithm as ChecksumAlgorithm;
  return bytes.length === DIGEST_BYTES[known] ? { algorithm: known, digest: bytes, source } : undefined;
}

const optionalCount = (value: unknown) =>
  value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0);

/**
 * True when a record read from disk has the form one of these runs writes: a damaged one (a stated checksum
 * of no known form, a size that is not a count) is not trusted at all, and the part is not resumed.
 */
export function validRecord(data: unknown): data is PartRecord {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const record = data as Record<string, unknown>;
  if (record.etag !== undefined && typeof record.etag !== 'string') return false;
  if (!optionalCount(record.size) || !optionalCount(record.written)) return false;
  return record.checksum === undefined || fromRecorded(record.checksum) !== undefined;
}

/** A part left unchanged this long by an owner that seems alive is taken for abandoned (a reused pid). */
const ABANDONED_AFTER_MS = 60_000;

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

async function readRecord(recordFile: string): Promise<PartRecord | undefined> {
  try {
    const handle = await openNoFollow(recordFile, constants.O_RDONLY);
    const text = await handle.readFile({ encoding: 'utf8' }).finally(() => handle.close());
    const data = JSON.parse(text) as unknown;
    return validRecord(data) ? data : undefined;
  } catch {
    return undefined;
  }
}

/** A leftover part in the destination's folder. */
export interface Leftover {
  /** The part file. */
  path: string;
  /** The file of its record, beside it. */
  recordFile: string;
  pid: number;
  /** What the record says the part holds; undefined when it is missing or not to be trusted. */
  record: PartRecord | undefined;
}

async function leftoverOf({ pid, part, record }: PartPaths): Promise<Leftover> {
  return { path: part, recordFile: record, pid, record: await readRecord(record) };
}

/**
 * The parts other runs left beside `destination`. `folderNames` is the folder's listing when the caller has it
 * (a batch lists each folder once: one listing per file would cost a batch of many small files dearly).
 */
export async function leftovers(destination: string, folderNames?: ReadonlySet<string>): Promise<Leftover[]> {
  const folder = dirname(destination);
  let names: Iterable<string>;
  try {
    names = folderNames ?? (await readdir(folder));
  } catch {
    return [];
  }
  const found: Leftover[] = [];
  for (const paths of new PartFiles(destination).among(names)) found.push(await leftoverOf(paths));
  return found;
}

/**
 * The part `paths` names when there is one: one `lstat` of a name, for a batch that knows which other runs work
 * in its data root (see `DataRoot.joinRuns`) and must not list the folder per file.
 */
export async function leftoverAt(paths: PartPaths): Promise<Leftover | undefined> {
  if (!lstatSync(paths.part, { throwIfNoEntry: false })) return undefined;
  return leftoverOf(paths);
}

/** Whether the owner of a leftover still works on it. */
export async function ownerAlive(leftover: Pick<Leftover, 'path' | 'pid' | 'record'>): Promise<boolean> {
  const sameHost = leftover.record === undefined || isThisHost(leftover.record.host);
  if (leftover.pid === process.pid && sameHost) return false;
  if (sameHost && !processAlive(leftover.pid)) return false;
  // A live pid may be a reused one, and another host's process cannot be asked: a part nobody has written
  // to for a while is abandoned.
  const stats = await stat(leftover.path).catch(() => undefined);
  return stats !== undefined && Date.now() - stats.mtimeMs < ABANDONED_AFTER_MS;
}

/** The part of one of `pids` beside `destination` whose owner still works on it, if any. */
export async function livePartOf(
  destination: string,
  pids: readonly number[],
): Promise<Leftover | undefined> {
  for (const pid of pids) {
    const leftover = await leftoverAt(new PartFiles(destination).of(pid));
    if (leftover && (await ownerAlive(leftover))) return leftover;
  }
  return undefined;
}

/** The folder of a part, checked before each write by its path (see `download/batch/folders.ts`). */
export interface FolderGuard {
  /** Throws when the folder no longer leads where it was checked to (`E_UNSAFE_PATH`) before a write at `path`. */
  confirm(path: string): void;
}

/** What a claim may be told besides the destination. */
export interface ClaimOptions {
  /**
   * The folder's listing, when the caller took one (it may be older than the other runs' parts): a batch lists
   * each folder once.
   */
  folderNames?: ReadonlySet<string> | undefined;
  /** The download runs working in the data root now, whose parts of this file are looked at by name. */
  otherRuns?: OtherRuns | undefined;
  /** The destination's folder as checked, confirmed before each write in it. */
  folder?: FolderGuard | undefined;
}

/** The part a claim gives: its file and record's names, its descriptor, and what it held when resumed. */
export interface ClaimedPart {
  path: string;
  recordFile: string;
  fd: number;
  resumed: (PartRecord & { written: number }) | undefined;
}

/**
 * The part of `destination` this process writes: a leftover of a dead process (found among `folderNames`, or by
 * name among the parts of `otherRuns`) taken over, or a new part. Throws `PartBusy` when a live process writes one.
 */
export async function claimPart(
  destination: string,
  { folderNames, folder }: ClaimOptions,
  otherRuns: readonly number[],
): Promise<ClaimedPart> {
  const { part: ours, record: ourRecord } = new PartFiles(destination).ours;
  let adopted: PartRecord | undefined;
  // A folder listed without parts (most are) holds no leftover of this file.
  const found = folderNames?.size === 0 ? [] : await leftovers(destination, folderNames);
  for (const pid of otherRuns) {
    const theirs = new PartFiles(destination).of(pid);
    if (!found.some((leftover) => leftover.path === theirs.part)) {
      const named = await leftoverAt(theirs);
      if (named) found.push(named);
    }
  }
  // Leftovers are renamed and removed by the folder's path: it is held to the folder checked first.
  if (found.length > 0) folder?.confirm(ours);
  for (const leftover of found) {
    if (await ownerAlive(leftover)) throw new PartBusy(leftover.pid, leftover.path);
    const kind = await lstat(leftover.path).catch(() => undefined);
    if (adopted === undefined && leftover.record !== undefined && kind?.isFile()) {
      // rename is atomic: when two runs reach for the same leftover, one of them gets it.
      try {
        if (leftover.path !== ours) {
          await replaceFile(leftover.path, ours);
          await replaceFile(leftover.recordFile, ourRecord).catch(() => undefined);
        }
        adopted = leftover.record;
        continue;
      } catch {
        // Taken by another run, or gone.
      }
    }
    // Dead, and not resumable here: never left to accumulate.
    await Promise.all([removeFile(leftover.path), removeFile(leftover.recordFile)]);
  }
  if (adopted) {
    const fd = await openPart(ours, constants.O_RDWR);
    const length = fstatSync(fd).size;
    const written = Math.min(adopted.written ?? length, length, adopted.size ?? Number.POSITIVE_INFINITY);
    const parts = finishedRanges(adopted.parts, written, Math.min(length, adopted.size ?? length));
    return { path: ours, recordFile: ourRecord, fd, resumed: { ...adopted, written, parts } };
  }
  // Right before the part is made (nothing is awaited between the two): never in a folder swapped for a link.
  folder?.confirm(ours);
  const flags = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL;
  let fd: number;
  try {
    fd = openNoFollowSync(ours, flags, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw localError(`Cannot write ${ours}`, error);
    // Left by an earlier process of this pid, or planted: removed (a link itself, never its target), then made anew.
    await removeFile(ours);
    folder?.confirm(ours);
    fd = await openPart(ours, flags);
  }
  return { path: ours, recordFile: ourRecord, fd, resumed: undefined };
}

/**
 * Opens a part, never through a link at its name (a link planted there is refused, on every system), on the
 * receiving thread: a synchronous open costs a third of the CPU of one in the thread pool (two hand-overs between
 * threads and a wake-up per file: 1,000 creations take 44 ms of CPU here against 140 ms), and on a machine of two
 * cores the pool's thread competes with the one receiving.
 */
function openDescriptor(path: string, flags: number): Promise<number> {
  try {
    return Promise.resolve(openNoFollowSync(path, flags, 0o644));
  } catch (error) {
    return Promise.reject(error);
  }
}

async function openPart(path: string, flags: number): Promise<number> {
  let fd: number;
  try {
    fd = await openDescriptor(path, flags);
  } catch (error) {
    throw localError(`Cannot write ${path}`, error);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new LocalFileError(`Cannot write ${path}: it is not a regular file.`);
  }
  return fd;
}
