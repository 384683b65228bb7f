/**
 * The record of verified downloads: one line per file the tool downloaded and checked against the store,
 * with the size, modification time and inode the file had then. A file that still matches its line is
 * skipped without a request; any other file at a destination is checked against the store first.
 *
 * It lives at `<data root>/.mission-data/verified.jsonl`, a log shared by the processes of a data root (its
 * format, its appends and its compaction: `verified-log.ts`); what one process appends, another reads on its next
 * miss. A run that asks about some files only opens it for those (a scope): the lines of other files are passed
 * over without being parsed, so opening it costs little more than reading its bytes.
 */
import { constants, lstatSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openNoFollow } from '../core/no-follow.js';
import { STATE_NAMES, stateFolder } from './state-folder.js';
import { inodesStayPut } from './verified-inodes.js';
import {
  compactionDue,
  compactLog,
  entryOf,
  isHeader,
  LogAppender,
  pathOfLine,
  readChunks,
  readHeader,
  sameEntry,
  type VerifiedEntry,
} from './verified-log.js';

export { sumOf, type VerifiedEntry } from './verified-log.js';

/** The storage paths a run asks the record about; the record may know more. */
export type VerifiedScope = Iterable<string>;

/**
 * Lines gathered before one append: a killed run loses at most these (the files are then checked against the
 * store next time), and a batch of many small files makes one write per this many instead of one per file.
 */
const FLUSH_EVERY_LINES = 64;
/** A scope this much smaller than the lines to read is tested line by line (a look-up costs half a parse). */
const SCOPE_FILTERS_BELOW = 1 / 4;

/** The verified-download record of one data root. */
export class VerifiedRecord {
  readonly #entries = new Map<string, VerifiedEntry>();
  /** What this process remembered whose line was not read back yet: it stands over lines read before it. */
  readonly #unread = new Map<string, VerifiedEntry>();
  /** The paths asked about, each to itself (an entry keeps the caller's string, not its line's copy); or all. */
  #scope: Map<string, string> | undefined;
  /** True while every line read was taken (no scope passed one by): the entries are then the whole log's. */
  #whole = true;
  /** The log read so far: its inode, its header's id ('' without one) and files at compaction, and how far. */
  #ino = 0;
  #id = '';
  #headerEntries = 0;
  #offset = 0;
  #lines = 0;
  #appender: LogAppender | undefined;
  /** Lines not written yet: they go out in one write per batch of files, not one per file. */
  #pending: string[] = [];
  /** Lines and bytes this record appended: a record that appended compacts the log at its close when due. */
  #appendedLines = 0;
  #appendedBytes = 0;
  /** The read under way (see `refresh`). */
  #reading: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string | undefined,
    /** False where the file system was seen to number files anew (exFAT and FAT through FUSE, after a remount). */
    readonly inodesStable = true,
    scope?: VerifiedScope,
  ) {
    this.#scope = scope === undefined ? undefined : new Map(Array.from(scope, (path) => [path, path]));
  }

  /**
   * Opens the record of `root`, for the files of `scope` (all when none is given). A state folder that is a link
   * or not a folder is not used: every file is then checked against the store, which is slower but never trusts
   * a file it should not.
   */
  static async open(root: string, scope?: VerifiedScope): Promise<VerifiedRecord> {
    const folder = stateFolder(root);
    await mkdir(folder).catch(() => undefined);
    const stats = await lstat(folder).catch(() => undefined);
    if (!stats?.isDirectory()) return new VerifiedRecord(undefined);
    const file = join(folder, STATE_NAMES.verifiedRecord);
    const record = new VerifiedRecord(file, await inodesStayPut(folder, true), scope);
    await record.refresh();
    return record;
  }

  /**
   * Opens the record of `root` to read it only, for the files of `scope`: nothing is created, and a root without
   * a record vouches for no file. For reports on a data root (`status`), which must leave it as they found it.
   */
  static async read(root: string, scope?: VerifiedScope): Promise<VerifiedRecord> {
    const folder = stateFolder(root);
    const stats = await lstat(folder).catch(() => undefined);
    const held = stats?.isDirectory() === true;
    const record = new VerifiedRecord(
      held ? join(folder, STATE_NAMES.verifiedRecord) : undefined,
      held ? await inodesStayPut(folder, false) : true,
      scope,
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

  /** Every file the record holds (of its scope at least), in no particular order. */
  entries(): IterableIterator<Readonly<VerifiedEntry>> {
    return this.#entries.values();
  }

  /**
   * Reads what other processes appended since the last read; one `lstat` when nothing was. Reads run one after
   * another: two at once would each advance the offset by what they read, and the next read would start past
   * lines it never took.
   */
  refresh(): Promise<void> {
    return this.#queue(() => this.#readAppended());
  }

  /** Takes the files of `scope` (every file when none is given) into the record's scope, reading their lines. */
  widen(scope?: VerifiedScope): Promise<void> {
    return this.#queue(async () => {
      const known = this.#scope;
      if (known === undefined) return;
      if (scope === undefined) this.#scope = undefined;
      else {
        const before = known.size;
        for (const path of scope) known.set(path, path);
        if (known.size === before) return;
      }
      // Read again from the start: lines of the paths already in scope are taken again, in their order.
      this.#offset = 0;
      await this.#readAppended();
    });
  }

  #queue(read: () => Promise<void>): Promise<void> {
    const next = this.#reading.then(read);
    this.#reading = next.catch(() => undefined);
    return next;
  }

  async #readAppended(): Promise<void> {
    if (!this.file) return;
    const now = lstatSync(this.file, { throwIfNoEntry: false });
    if (now === undefined || (this.#offset > 0 && now.size === this.#offset && now.ino === this.#ino)) return;
    let handle: FileHandle;
    try {
      handle = await openNoFollow(this.file, constants.O_RDONLY);
    } catch {
      return;
    }
    try {
      const { size, ino } = await handle.stat();
      const header = await readHeader(handle);
      if (ino !== this.#ino || (header?.id ?? '') !== this.#id || size < this.#offset) {
        // Another log than the one read (compacted since, by this version or an older one): read it whole.
        this.#offset = 0;
      }
      if (this.#offset === 0) {
        this.#ino = ino;
        this.#id = header?.id ?? '';
        this.#headerEntries = header?.entries ?? 0;
        this.#lines = 0;
        this.#whole = true;
      }
      if (size > this.#offset) await this.#readLines(handle, size);
    } finally {
      await handle.close();
    }
    for (const [path, entry] of this.#unread) this.#entries.set(path, entry);
  }

  /** Takes the lines from the offset up to `size`, parsing only those of the scope's paths when that pays. */
  async #readLines(handle: FileHandle, size: number): Promise<void> {
    const from = this.#offset;
    let filter: ReadonlyMap<string, string> | undefined;
    let decided = false;
    this.#offset = await readChunks(handle, from, size, (text) => {
      const lines = text.split('\n');
      if (!decided) {
        decided = true;
        const expected = ((size - from) / text.length) * lines.length;
        if (this.#scope !== undefined && this.#scope.size < expected * SCOPE_FILTERS_BELOW)
          filter = this.#scope;
        if (filter) this.#whole = false;
      }
      for (const line of lines) this.#take(line, filter);
    });
  }

  #take(line: string, scope: ReadonlyMap<string, string> | undefined): void {
    if (line === '' || isHeader(line)) return;
    this.#lines += 1;
    if (scope !== undefined) {
      const path = pathOfLine(line);
      if (path !== undefined && !scope.has(path)) return;
    }
    const entry = entryOf(line);
    if (entry === undefined || (scope !== undefined && !scope.has(entry.p))) return;
    entry.p = this.#scope?.get(entry.p) ?? entry.p;
    const mine = this.#unread.get(entry.p);
    if (mine !== undefined && sameEntry(mine, entry)) this.#unread.delete(entry.p);
    this.#entries.set(entry.p, entry);
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
    this.#unread.set(entry.p, entry);
    this.#pending.push(`${JSON.stringify(entry)}\n`);
    if (now || this.#pending.length >= FLUSH_EVERY_LINES) this.flush();
  }

  /** Writes the lines added since the last flush, in one append. */
  flush(): void {
    if (!this.file || this.#pending.length === 0) return;
    const lines = this.#pending;
    this.#pending = [];
    const text = lines.join('');
    this.#appender ??= new LogAppender(this.file, this.inodesStable);
    if (this.#appender.append(text)) {
      this.#appendedLines += lines.length;
      this.#appendedBytes += text.length;
      return;
    }
    // Without these lines the files are checked against the store next time: slower, never wrong. Lines read
    // later then say what the log says of them.
    for (const line of lines) {
      const path = entryOf(line)?.p;
      if (path !== undefined) this.#unread.delete(path);
    }
  }

  /** Writes what is pending and closes the record. */
  close(): void {
    this.flush();
    this.#appender?.close();
  }

  /**
   * Closes the record; then, when it appended to a log that holds many more lines than files, compacts the log
   * (see `verified-log.ts`), as the writer that grew it.
   */
  async closeAndCompact(): Promise<void> {
    this.close();
    if (this.file && this.#compactionDue()) await compactLog(this.file);
  }

  /**
   * Whether the log is due a compaction: its lines (those read, and the rest of its bytes at the length of a line
   * so far) against its files (those read when every line was taken; else at least those of its last compaction).
   */
  #compactionDue(): boolean {
    if (!this.file || this.#appendedLines === 0 || !this.inodesStable) return false;
    const size = lstatSync(this.file, { throwIfNoEntry: false })?.size ?? 0;
    const lineBytes = (this.#offset + this.#appendedBytes) / (this.#lines + this.#appendedLines);
    const lines = this.#lines + Math.max(0, size - this.#offset) / lineBytes;
    return compactionDue(
      lines,
      this.#whole ? this.#entries.size : Math.max(this.#headerEntries, this.#entries.size),
    );
  }
}

/**
 * The results of a batch whose files are all verified copies in place (each skipped), read without writing; undefined
 * when any is not. A data root that cannot be written to (a read-only mirror) still lists what it holds.
 */
export async function allVerified(
  root: string,
  files: readonly { file: { path: string }; localPath: string }[],
): Promise<{ path: string; localPath: string; status: 'skipped'; bytes: 0; verified: true }[] | undefined> {
  const record = await VerifiedRecord.read(
    root,
    files.map(({ file }) => file.path),
  );
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
