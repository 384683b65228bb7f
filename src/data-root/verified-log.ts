/**
 * The file of the verified record, `<data root>/.mission-data/verified.jsonl`: a log of JSON lines, one per file
 * verified (`{"p":"<storage path>",...}`, `p` first), a later line of a path replacing its earlier ones. Processes
 * sharing a data root append to it with one `write` per batch of lines (O_APPEND) and read what the others
 * appended from the offset they last read to.
 *
 * Every `verify` pass adds a line per file, so a writer whose log holds many more lines than files rewrites it
 * (compaction): the last line of each path, read from the log, is written to a new file, synced, and renamed over
 * the log, so a crash leaves the old log or the new one, never less. A compacted log starts with a header line
 * (`{"compacted":<ms>,"entries":<files>,"id":"<hex>"}`) that versions before it skip as a line without `p`.
 *
 * What keeps the lines of another process appending at the same moment (`download` and `verify` runs may share a
 * root): compactions take a lock (`verified.jsonl.lock`, one at a time); after its rename, the compactor appends
 * to the new log the complete lines the old one got after it was read; and every writer, after each append,
 * checks that the file at the log's path is still the one it wrote to, and appends the same lines again to the new
 * one when it is not. A line lands before the rename (in the copy or in that tail) or the writer sees the rename
 * after writing it, so none is lost; one may be written twice, which changes nothing. Readers tell a replaced log
 * by its inode, its header's id or its size, and read it again from the start. Compaction needs inode numbers the
 * file system keeps (the record's probe says so): elsewhere the log is never compacted; a rename refused while
 * another program holds the log open (Windows) leaves the long log to a later run. A version before this one,
 * appending without the check, may lose lines written during a compaction (as its own compaction at an open
 * could): those files are checked against the store again, which is slower but never wrong.
 */
import { closeSync, constants, fstatSync, lstatSync, writeSync } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { ExpectedChecksum } from '../core/checksums/checksum.js';
import { NO_FOLLOW, openNoFollow, openNoFollowSync } from '../core/no-follow.js';
import { cryptoModule } from '../core/on-first-use.js';
import { replaceFile } from '../core/replace-file.js';
import { acquireLock, type SyncLock } from './sync-lock.js';

/** Bytes of the log read at once: a log of 100,000 files (tens of MB) is never held whole. */
const READ_CHUNK_BYTES = 64 * 1024;
/** How a compacted log's first line begins. */
const HEADER_START = '{"compacted":';
/** How a line written by this tool begins: its path is read without parsing the line. */
const PATH_START = '{"p":"';

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

/** True when two lines say the same of a file (a line this process wrote, read back). */
export function sameEntry(a: VerifiedEntry, b: VerifiedEntry): boolean {
  return (
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ino === b.ino &&
    a.sum === b.sum &&
    a.at === b.at &&
    a.bad === b.bad
  );
}

/** The entry a line holds; undefined for a damaged line (it vouches for nothing) or a header. */
export function entryOf(line: string): VerifiedEntry | undefined {
  try {
    const entry = JSON.parse(line) as VerifiedEntry | null;
    return typeof entry?.p === 'string' && typeof entry.size === 'number' ? entry : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The storage path of a line as this tool writes it, read without parsing the line; undefined when the line
 * must be parsed to know it (another form, or an escaped character in the path).
 */
export function pathOfLine(line: string): string | undefined {
  if (!line.startsWith(PATH_START)) return undefined;
  const end = line.indexOf('"', PATH_START.length);
  const path = line.slice(PATH_START.length, end);
  return end < 0 || path.includes('\\') ? undefined : path;
}

/** True for a compacted log's header line. */
export function isHeader(line: string): boolean {
  return line.startsWith(HEADER_START);
}

/** What a compacted log's header says: which compaction wrote it, and how many files the log held then. */
export interface LogHeader {
  id: string;
  entries: number;
}

/** The header of the log open in `handle`; undefined for a log never compacted (or compacted by an older version). */
export async function readHeader(handle: FileHandle): Promise<LogHeader | undefined> {
  const buffer = Buffer.alloc(256);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  const text = buffer.toString('utf8', 0, bytesRead);
  const end = text.indexOf('\n');
  if (!isHeader(text) || end < 0) return undefined;
  try {
    const header = JSON.parse(text.slice(0, end)) as Partial<LogHeader>;
    if (typeof header.id !== 'string' || typeof header.entries !== 'number') return undefined;
    return { id: header.id, entries: header.entries };
  } catch {
    return undefined;
  }
}

/**
 * Reads the complete lines of `handle` from `from` up to `to` in chunks of READ_CHUNK_BYTES, handing each chunk's
 * lines to `each` as one text (each line ending in a newline); a line still being written (no newline yet) is
 * left. Resolves to the offset after the last complete line.
 */
export async function readChunks(
  handle: FileHandle,
  from: number,
  to: number,
  each: (text: string) => void | Promise<void>,
): Promise<number> {
  if (to <= from) return from;
  let buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, to - from));
  // The bytes of a line not complete at the end of a read, moved to the front of the buffer for the next one.
  let carried = 0;
  let position = from;
  let offset = from;
  while (position < to) {
    if (carried === buffer.length) {
      // A line longer than the buffer: a larger one, the line so far copied.
      const larger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(larger);
      buffer = larger;
    }
    const room = Math.min(buffer.length - carried, to - position);
    const { bytesRead } = await handle.read(buffer, carried, room, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const length = carried + bytesRead;
    const complete = buffer.subarray(0, length).lastIndexOf(10) + 1;
    if (complete > 0) await each(buffer.toString('utf8', 0, complete));
    offset += complete;
    carried = length - complete;
    buffer.copy(buffer, 0, complete, length);
  }
  return offset;
}

/**
 * Appends lines to the log, checking after each append that the file at the log's path is still the one written
 * to (see above); `confirm` false where inode numbers say nothing (the log is then never compacted).
 */
export class LogAppender {
  #fd: number | undefined;
  #ino = 0;

  constructor(
    readonly file: string,
    readonly confirm: boolean,
  ) {}

  /** Appends `text` (whole lines); false when it could not be written. */
  append(text: string): boolean {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        if (this.#fd === undefined) {
          this.#fd = openNoFollowSync(
            this.file,
            constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
            0o644,
          );
          this.#ino = fstatSync(this.#fd).ino;
        }
        writeSync(this.#fd, text);
        if (!this.confirm || lstatSync(this.file, { throwIfNoEntry: false })?.ino === this.#ino) return true;
      } catch {
        this.close();
        return false;
      }
      // The log was replaced by a compaction since it was opened: these lines may have missed the copy.
      this.close();
    }
    return false;
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing is pending on a descriptor written with writeSync.
    }
  }
}

/** A log of more lines than this, and more than COMPACT_FACTOR lines a file, is compacted by a writer's close. */
const COMPACT_ABOVE_LINES = 10_000;
/** A full `verify` pass doubles the log; compacted after it, every later run reads one line a file. */
const COMPACT_FACTOR = 1.5;

/** Whether a log of `lines` lines holding `files` files is worth compacting. */
export function compactionDue(lines: number, files: number): boolean {
  return lines > COMPACT_ABOVE_LINES && lines > COMPACT_FACTOR * files;
}

/** The steps of a compaction around its rename, replaceable by tests (which append from another writer there). */
export const compactionSteps = {
  beforeReplace: async (): Promise<void> => undefined,
  afterReplace: async (): Promise<void> => undefined,
};

/**
 * Rewrites the log `file` with the last line of each path, under the compaction lock (see above); false when it
 * was not (another process compacts it, or the rewrite failed: the long log still serves).
 */
export async function compactLog(file: string): Promise<boolean> {
  let lock: SyncLock;
  try {
    lock = await acquireLock(dirname(file), basename(file), 'compaction of the verified record');
  } catch {
    return false;
  }
  // One name: the lock makes any file there a dead compaction's.
  const temporary = `${file}.compact`;
  let source: FileHandle | undefined;
  try {
    source = await openNoFollow(file, constants.O_RDONLY);
    const end = await copyLastLines(source, (await source.stat()).size, temporary);
    await compactionSteps.beforeReplace();
    await replaceFile(temporary, file);
    await compactionSteps.afterReplace();
    // The lines another process appended to the old log after it was read.
    const tail: string[] = [];
    await readChunks(source, end, (await source.stat()).size, (text) => {
      tail.push(text);
    });
    if (tail.length > 0) {
      const appender = new LogAppender(file, true);
      appender.append(tail.join(''));
      appender.close();
    }
    return true;
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
    return false;
  } finally {
    await source?.close();
    await lock.release().catch(() => undefined);
  }
}

/**
 * Writes to `temporary` (synced) a header and the last line of each path of the log in `source` up to `size`, in
 * their order; resolves to the offset after the last complete line read. A first read finds the line number of
 * each path's last line, the second writes those lines.
 */
async function copyLastLines(source: FileHandle, size: number, temporary: string): Promise<number> {
  const last = new Map<string, number>();
  let line = 0;
  const end = await readChunks(source, 0, size, (text) => {
    for (const each of text.split('\n')) {
      if (each === '') continue;
      const path = entryOf(each)?.p;
      if (path !== undefined) last.set(path, line);
      line += 1;
    }
  });
  const kept = new Uint8Array(line);
  for (const at of last.values()) kept[at] = 1;
  await rm(temporary, { force: true });
  const out = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
    0o644,
  );
  try {
    await out.write(headerLine(last.size));
    line = 0;
    await readChunks(source, 0, end, async (text) => {
      const lines = text.split('\n').filter((each) => each !== '' && kept[line++] === 1);
      if (lines.length > 0) await out.write(`${lines.join('\n')}\n`);
    });
    await out.sync();
  } finally {
    await out.close();
  }
  return end;
}

function headerLine(entries: number): string {
  return `${JSON.stringify({ compacted: Date.now(), entries, id: cryptoModule().randomBytes(6).toString('hex') })}\n`;
}
