/**
 * The record of verified downloads: one line per file the tool downloaded and checked against the store,
 * with the size, modification time and inode the file had then. A file that still matches its line is
 * skipped without a request; any other file at a destination is checked against the store first.
 *
 * It lives at `<data root>/.mission-data/verified.jsonl`, appended to with one `write` per line (O_APPEND),
 * so processes sharing a data root add to it safely; what one process appends, another reads on its next miss.
 */
import { closeSync, constants, lstatSync, type Stats, writeSync } from 'node:fs';
import { lstat, mkdir, type open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExpectedChecksum } from '../core/checksums/checksum.js';
import { openNoFollow, openNoFollowSync } from '../core/no-follow.js';
import { replaceFile } from '../core/replace-file.js';
import { writeNewFile } from './safe-writes.js';
import { STATE_NAMES, stateFolder } from './state-folder.js';

/**
 * Lines gathered before one append: a killed run loses at most these (the files are then checked against the
 * store next time), and a batch of many small files makes one write per this many instead of one per file.
 */
const FLUSH_EVERY_LINES = 64;
/** Bytes of the record read at once. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** A record with many more lines than files is rewritten when opened. */
const COMPACT_ABOVE_LINES = 10_000;

/** How the record names a checksum: `<algorithm>:<hex>`. */
export function sumOf(checksum: Pick<ExpectedChecksum, 'algorithm' | 'digest'>): string {
  return `${checksum.algorithm}:${checksum.digest.toString('hex')}`;
}

/** What the record holds of one file. */
export interface VerifiedEntry {
  /** Storage path. */
  p: string;
  size: number;
  mtimeMs: number;
  ino: number;
  /** The checksum it was verified with, as `<algorithm>:<hex>`. */
  sum: string;
  /** When it was last verified (ms since the epoch): its download, or the last `verify` that found it whole. */
  at?: number | undefined;
  /**
   * Set by a `verify` that found the file's bytes no longer those of `sum` (the `<algorithm>:<hex>` it got): the
   * line then vouches for nothing, so `download` checks it against the store again and `status` calls it changed.
   */
  bad?: string | undefined;
}

/** The verified-download record of one data root. */
export class VerifiedRecord {
  readonly #entries = new Map<string, VerifiedEntry>();
  #offset = 0;
  #lines = 0;
  #appendFd: number | undefined;
  /** Lines not written yet: they go out in one write per batch of files, not one per file. */
  #pending: string[] = [];
  /** The read of appended lines under way (see `refresh`). */
  #reading: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string | undefined,
    /** False where the file system was seen to number files anew (exFAT and FAT through FUSE, after a remount). */
    readonly inodesStable = true,
  ) {}

  /**
   * Opens the record of `root`. A state folder that is a link or not a folder is not used: every file is then
   * checked against the store, which is slower but never trusts a file it should not.
   */
  static async open(root: string): Promise<VerifiedRecord> {
    const folder = stateFolder(root);
    await mkdir(folder).catch(() => undefined);
    const stats = await lstat(folder).catch(() => undefined);
    if (!stats?.isDirectory()) return new VerifiedRecord(undefined);
    const record = new VerifiedRecord(
      join(folder, STATE_NAMES.verifiedRecord),
      await inodesStayPut(folder, true),
    );
    await record.refresh();
    if (record.#lines > COMPACT_ABOVE_LINES && record.#lines > 2 * record.#entries.size)
      await record.#compact();
    return record;
  }

  /**
   * Opens the record of `root` to read it only: nothing is created, and a root without a record vouches for no
   * file. For reports on a data root (`status`), which must leave it as they found it.
   */
  static async read(root: string): Promise<VerifiedRecord> {
    const folder = stateFolder(root);
    const stats = await lstat(folder).catch(() => undefined);
    const held = stats?.isDirectory() === true;
    const record = new VerifiedRecord(
      held ? join(folder, STATE_NAMES.verifiedRecord) : undefined,
      held ? await inodesStayPut(folder, false) : true,
    );
    await record.refresh();
    return record;
  }

  /** What the record says of `path`: the file's size, modification time and inode when verified, and its checksum. */
  recorded(path: string): Readonly<VerifiedEntry> | undefined {
    return this.#entries.get(path);
  }

  /**
   * True when `path` was verified and the file there is still the one that was: the same size, modification time
   * and inode. Where the file system numbers its files anew (seen by the probe, never assumed), the inode says
   * nothing and size and time decide alone, as they do for rsync and make: a file replaced by one of the same
   * size within the same tick of the clock (10 ms on exFAT, 2 s on FAT) would pass there, as it does for them.
   */
  matches(path: string, stats: Stats): boolean {
    const entry = this.#entries.get(path);
    return (
      entry !== undefined &&
      entry.bad === undefined &&
      stats.isFile() &&
      entry.size === stats.size &&
      entry.mtimeMs === stats.mtimeMs &&
      (entry.ino === stats.ino || !this.inodesStable)
    );
  }

  /** The algorithm `path` was verified with (`crc32`, `md5`, ...), when it is recorded. */
  algorithmOf(path: string): string | undefined {
    const sum = this.#entries.get(path)?.sum;
    return sum?.slice(0, sum.indexOf(':'));
  }

  /** Every file the record holds, in no particular order. */
  entries(): IterableIterator<Readonly<VerifiedEntry>> {
    return this.#entries.values();
  }

  /**
   * Reads what other processes appended since the last read; one `lstat` when nothing was. Reads run one after
   * another: two at once would each advance the offset by what they read, and the next read would start past
   * lines it never took.
   */
  refresh(): Promise<void> {
    const read = this.#reading.then(() => this.#readAppended());
    this.#reading = read.catch(() => undefined);
    return read;
  }

  async #readAppended(): Promise<void> {
    if (!this.file) return;
    const now = lstatSync(this.file, { throwIfNoEntry: false });
    if (now === undefined || (now.size === this.#offset && this.#offset > 0)) return;
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await openNoFollow(this.file, constants.O_RDONLY);
    } catch {
      return;
    }
    try {
      const { size } = await handle.stat();
      if (size < this.#offset) {
        // Rewritten by a compaction elsewhere: read it whole again.
        this.#offset = 0;
        this.#entries.clear();
        this.#lines = 0;
      }
      if (size === this.#offset) return;
      await this.#readLines(handle, size);
    } finally {
      await handle.close();
    }
  }

  /**
   * Records that the file at `path` (with these stats) holds the verified bytes; `now` writes the line at once
   * (a large file, which another process may be waiting for), otherwise with the next few.
   */
  add(path: string, stats: Stats, sum: string, now = false): void {
    const entry: VerifiedEntry = {
      p: path,
      size: stats.size,
      mtimeMs: stats.mtimeMs,
      ino: stats.ino,
      sum,
      at: Date.now(),
    };
    this.remember(entry, now);
  }

  /**
   * Records a whole line (a `verify` pass: the file found whole at `at`, or found damaged with `bad`); `now`
   * writes it at once, otherwise with the next few. A line replaces the file's earlier one; earlier lines stay in
   * the file until a compaction, so a pass cut short loses only the lines not yet written.
   */
  remember(entry: VerifiedEntry, now = false): void {
    this.#entries.set(entry.p, entry);
    if (!this.file) return;
    this.#pending.push(`${JSON.stringify(entry)}\n`);
    if (now || this.#pending.length >= FLUSH_EVERY_LINES) this.flush();
  }

  /** Writes the lines added since the last flush, in one append. */
  flush(): void {
    if (!this.file || this.#pending.length === 0) return;
    const text = this.#pending.join('');
    this.#pending = [];
    try {
      this.#appendFd ??= openAppend(this.file);
      writeSync(this.#appendFd, text);
    } catch {
      // Without these lines the files are checked against the store next time: slower, never wrong.
    }
  }

  /** Writes what is pending and closes the record. */
  close(): void {
    this.flush();
    if (this.#appendFd === undefined) return;
    closeSync(this.#appendFd);
    this.#appendFd = undefined;
  }

  /**
   * Reads the lines from the last offset up to `size` in chunks of READ_CHUNK_BYTES, so a record of 100,000
   * files (tens of MB after a few passes) is never held whole; a line still being written by another process
   * (no newline yet) is left for the next read.
   */
  async #readLines(handle: Awaited<ReturnType<typeof open>>, size: number): Promise<void> {
    const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, size - this.#offset));
    let carried = Buffer.alloc(0);
    let position = this.#offset;
    while (position < size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const chunk = carried.length > 0 ? Buffer.concat([carried, buffer.subarray(0, bytesRead)]) : buffer;
      const length = carried.length > 0 ? chunk.length : bytesRead;
      const complete = chunk.subarray(0, length).lastIndexOf(10) + 1;
      for (const line of chunk.subarray(0, complete).toString('utf8').split('\n')) this.#take(line);
      this.#offset += complete;
      carried = Buffer.from(chunk.subarray(complete, length));
    }
  }

  #take(line: string): void {
    if (line.trim() === '') return;
    this.#lines += 1;
    try {
      const entry = JSON.parse(line) as VerifiedEntry;
      if (typeof entry.p === 'string' && typeof entry.size === 'number') this.#entries.set(entry.p, entry);
    } catch {
      // A damaged line vouches for nothing.
    }
  }

  async #compact(): Promise<void> {
    if (!this.file) return;
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      const lines = [...this.#entries.values()].map((entry) => `${JSON.stringify(entry)}\n`).join('');
      await writeNewFile(temporary, lines, 0o644);
      await replaceFile(temporary, this.file);
      this.#offset = 0;
      this.#entries.clear();
      this.#lines = 0;
      await this.refresh();
    } catch {
      // Compaction only saves space; the long record still serves.
    }
  }
}

/** What the probe's record holds: the probe file's inode number and change time, and whether they stay put. */
interface InodeProbe {
  ino: number;
  ctimeMs: number;
  stable: boolean;
}

/**
 * Whether the file system of the state `folder` keeps a file's inode number, found by a probe file made there once
 * and never written again. It is made under another name and renamed into place: a file system that numbers a
 * renamed file anew (exFAT and FAT on Windows) shows it then. Later, the probe with its change time unchanged but
 * another number shows one that numbers files anew at each mount (exfat-fuse numbers them in the order it is
 * asked); another change time means the probe itself was copied (a root moved to another disk), so it is measured
 * again. A change seen once is written down. `create` makes and records (a reader leaves the root as it found
 * it). Any failure answers true: the inode then counts, which costs requests, never trust.
 */
async function inodesStayPut(folder: string, create: boolean): Promise<boolean> {
  const probe = join(folder, STATE_NAMES.inodeProbe);
  const known = await readProbe(`${probe}.json`);
  if (known?.stable === false) return false;
  const stats = await lstat(probe).catch(() => undefined);
  if (!stats?.isFile()) return create ? makeProbe(probe) : true;
  if (known === undefined || stats.ino === known.ino) return true;
  const renumbered = stats.ctimeMs === known.ctimeMs;
  if (create) {
    const now = { ino: stats.ino, ctimeMs: stats.ctimeMs, stable: !renumbered };
    await writeProbeRecord(`${probe}.json`, now).catch(() => undefined);
  }
  return !renumbered;
}

async function readProbe(path: string): Promise<InodeProbe | undefined> {
  try {
    const probe = JSON.parse(await readFile(path, 'utf8')) as Partial<InodeProbe>;
    const { ino, ctimeMs, stable } = probe;
    if (typeof ino !== 'number' || typeof ctimeMs !== 'number' || typeof stable !== 'boolean')
      return undefined;
    return { ino, ctimeMs, stable };
  } catch {
    return undefined;
  }
}

/** Makes the probe (under another name first, then renamed) and records it; whether its number survived the rename. */
async function makeProbe(probe: string): Promise<boolean> {
  const temporary = `${probe}.${process.pid}.tmp`;
  try {
    await writeNewFile(temporary, '', 0o644);
    const before = await lstat(temporary);
    await replaceFile(temporary, probe);
    const after = await lstat(probe);
    const stable = after.ino === before.ino;
    await writeProbeRecord(`${probe}.json`, { ino: after.ino, ctimeMs: after.ctimeMs, stable });
    return stable;
  } catch {
    // Made by another process at the same moment, or not at all: the next run looks again.
    return true;
  }
}

/** Writes the probe's record whole (a temporary file renamed over the old one). */
async function writeProbeRecord(path: string, probe: InodeProbe): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeNewFile(temporary, `${JSON.stringify(probe)}\n`, 0o644);
  await replaceFile(temporary, path);
}

function openAppend(file: string): number {
  return openNoFollowSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o644);
}

/**
 * The results of a batch whose files are all verified copies in place (each skipped), read without writing; undefined
 * when any is not. A data root that cannot be written to (a read-only mirror) still lists what it holds.
 */
export async function allVerified(
  root: string,
  files: readonly { file: { path: string }; localPath: string }[],
): Promise<{ path: string; localPath: string; status: 'skipped'; bytes: 0; verified: true }[] | undefined> {
  const record = await VerifiedRecord.read(root);
  try {
    const held = [];
    for (const { file, localPath } of files) {
      const stats = await lstat(localPath).catch(() => undefined);
      if (!stats || !record.matches(file.path, stats)) return undefined;
      held.push({
        path: file.path,
        localPath,
        status: 'skipped' as const,
        bytes: 0 as const,
        verified: true as const,
      });
    }
    return held;
  } finally {
    record.close();
  }
}
