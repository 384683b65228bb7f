/**
 * The life of a download's part file. Each process writes its own part, `<name>.part.<pid>`, created
 * exclusively and never through a symbolic link, beside a small record `<name>.part.<pid>.json` of the
 * object it holds (ETag, size, bytes on disk). Only a fully received and verified part is renamed over the
 * destination. A part left by a process that died (Ctrl-C, kill, a lost network) is taken over by the next
 * run, which resumes it; one whose owner still runs is left alone.
 *
 * Writes (~1 MiB each), truncation, closing and the final rename are synchronous, as in curl and aria2: handing
 * them to the thread pool costs more than they do (two hand-overs between threads, each a wake-up of a sleeping
 * thread), and on a machine of two cores that thread competes with the one receiving. Creating the part is
 * synchronous too (see `claimPart` in `part-leftovers.ts`).
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  writeSync,
  writevSync,
} from 'node:fs';
import { HASH_READ_BYTES } from '../../core/checksums/checksum.js';
import { LocalFileError } from '../../core/errors.js';
import { hostId } from '../../core/host-id.js';
import { isHeldOpen, removeFile, replaceFile, replaceFileSync } from '../../core/replace-file.js';
import { localError, NO_FOLLOW, PartFiles } from '../../data-root/index.js';
import {
  type ClaimOptions,
  claimPart,
  type FolderGuard,
  livePartOf,
  PartBusy,
  type PartRecord,
} from './part-leftovers.js';

export { PartBusy } from './part-leftovers.js';

/** Destinations this process is writing, so two batches of one process never share a part. */
const claimedHere = new Set<string>();

/** A part file being written; `commit`, `keep` or `discard` ends it. */
export class PartFile {
  #fd: number | undefined;
  #ended = false;
  /** Whether a record was written beside the part (one to remove once the part is in place). */
  #recorded = false;

  private constructor(
    /** The destination the part becomes. */
    readonly destination: string,
    /** The part file's own path. */
    readonly path: string,
    /** The file of the part's record, beside it. */
    private readonly recordFile: string,
    fd: number,
    /** What the part held when it was claimed (a resumed part), or undefined for a new one. */
    readonly resumed: (PartRecord & { written: number }) | undefined,
    /** The part's folder, confirmed before each write of the record beside the part. */
    private readonly folder: FolderGuard | undefined,
  ) {
    this.#fd = fd;
  }

  /**
   * Claims the part of `destination` (whose folder must exist): takes over a part a dead process left (to
   * resume it) or creates a new one, and removes leftovers that cannot be resumed. Throws `PartBusy` when a
   * live process is writing this file. See `ClaimOptions` for what the caller may know already.
   */
  static async claim(destination: string, options: ClaimOptions = {}): Promise<PartFile> {
    if (claimedHere.has(destination)) throw new PartBusy(process.pid, new PartFiles(destination).ours.part);
    claimedHere.add(destination);
    const { otherRuns } = options;
    try {
      const { path, recordFile, fd, resumed } = await claimPart(
        destination,
        options,
        otherRuns?.seen() ?? [],
      );
      const part = new PartFile(destination, path, recordFile, fd, resumed, options.folder);
      // Two runs may reach one file at once, each finding no part of the other and making its own. Each looks
      // again once its part exists: of two parts made at once, the later look sees the earlier part, so at
      // least one of the two steps back (both may: each then comes back after a wait of its own length). This
      // look is the one a claim makes of the runs' folder: the leftovers above were looked for among the runs
      // seen before, and a run that came since has, if any part of this file, a live one, which this look sees.
      const others = otherRuns?.look() ?? [];
      const rival = others.length > 0 ? await livePartOf(destination, others) : undefined;
      if (rival) {
        await part.stepBack();
        throw new PartBusy(rival.pid, rival.path);
      }
      return part;
    } catch (error) {
      claimedHere.delete(destination);
      throw error;
    }
  }

  /** Writes `buffers` (`size` bytes in all) at `position`, finishing short writes. */
  write(buffers: readonly Buffer[], size: number, position: number): void {
    const fd = this.#open();
    try {
      let done = writevSync(fd, buffers as Buffer[], position);
      if (done < size) {
        // Short writes are rare on regular files; finish the rest from one joined buffer.
        const rest = Buffer.concat(buffers as Buffer[]).subarray(done);
        let offset = 0;
        while (done < size) {
          const written = writevSync(fd, [rest.subarray(offset)], position + done);
          if (written === 0)
            throw Object.assign(new Error('the disk accepted no more bytes'), { code: 'ENOSPC' });
          done += written;
          offset += written;
        }
      }
    } catch (error) {
      throw localError(`Cannot write ${this.path}`, error);
    }
  }

  /** Feeds `length` bytes of the part from byte `from` to `consume`, in order (to build the checksum of what is on disk). */
  readBack(length: number, consume: (chunk: Buffer) => void, from = 0): void {
    const fd = this.#open();
    const buffer = Buffer.allocUnsafe(Math.min(length, HASH_READ_BYTES) || 1);
    let done = 0;
    try {
      while (done < length) {
        const read = readSync(fd, buffer, 0, Math.min(buffer.length, length - done), from + done);
        if (read === 0) throw new Error(`the part ends before byte ${from + length}`);
        consume(buffer.subarray(0, read));
        done += read;
      }
    } catch (error) {
      throw localError(`Cannot read ${this.path}`, error);
    }
  }

  /** The open descriptor, for a thread of this process that reads the part behind the writes (hashing). */
  get descriptor(): number {
    return this.#open();
  }

  /** Empties the part, to start the object again from its first byte. */
  truncate(): void {
    try {
      ftruncateSync(this.#open(), 0);
    } catch (error) {
      throw localError(`Cannot write ${this.path}`, error);
    }
  }

  /** Writes the part's record, so that a later run can resume it even if this one is killed. */
  record(record: Omit<PartRecord, 'pid' | 'host'>): void {
    // A part already committed, kept or discarded has its last record (or none): a late one would be a stray.
    if (this.#ended) return;
    const contents: PartRecord = { ...record, pid: process.pid, host: hostId() };
    const file = this.recordFile;
    const temporary = `${file}.tmp`;
    try {
      // Exclusive and without following links: a file planted under these names is never written through; and
      // never in a folder swapped for a link since the part was made (a record is written while bytes land).
      this.folder?.confirm(temporary);
      removeQuietly(temporary);
      const fd = openSync(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
        0o600,
      );
      try {
        writeSync(fd, JSON.stringify(contents));
      } finally {
        closeSync(fd);
      }
      replaceFileSync(temporary, file);
      this.#recorded = true;
    } catch (error) {
      // A record cut short (a full disk) leaves nothing behind: the part's length says how far it got.
      try {
        removeQuietly(temporary);
      } catch {
        // Left behind: a temporary record is never read.
      }
      throw localError(`Cannot write ${file}`, error);
    }
  }

  /**
   * Closes the part and renames it over the destination (replacing a file or a link there, never following it);
   * resolves to the file's stats, as the destination now has them (a rename keeps inode, size and times).
   * `beforeRename` is told those stats first: a record of the file made then is true the moment another process
   * can see the file.
   */
  async commit(beforeRename?: (stats: Stats) => void): Promise<Stats> {
    const stats = fstatSync(this.#open());
    this.#close();
    beforeRename?.(stats);
    try {
      // Synchronous first: the common case costs no hand-over to the thread pool (see the top of this file).
      renameSync(this.path, this.destination);
    } catch (error) {
      if (!isHeldOpen(error)) throw localError(`Cannot move ${this.path} to ${this.destination}`, error);
      // A destination another program holds open (Windows): tried again for a while, without blocking the batch.
      await replaceFile(this.path, this.destination).catch((held: unknown) => {
        throw localError(`Cannot move ${this.path} to ${this.destination}`, held);
      });
    }
    this.#end();
    if (this.#recorded || this.resumed) {
      try {
        rmSync(this.recordFile, { force: true });
      } catch {
        // Left behind: a record whose part is gone is never used (a part is resumed with its own record only).
      }
    }
    return stats;
  }

  /** Closes the part and leaves it, with its record, for a later run to resume. */
  keep(record: Omit<PartRecord, 'pid' | 'host'>): void {
    try {
      this.record(record);
    } catch {
      // Without its record the next run resumes from the part's length, or starts over.
    }
    this.#closeQuietly();
    this.#end();
  }

  /** Leaves the file to another run: a new part is removed, a resumed one kept for whoever comes next. */
  async stepBack(): Promise<void> {
    if (this.resumed) {
      this.#closeQuietly();
      this.#end();
      return;
    }
    await this.discard();
  }

  /** Closes and removes the part and its record; never throws: the error being reported is the one that matters. */
  async discard(): Promise<void> {
    this.#closeQuietly();
    if (this.#ended) return;
    this.#end();
    await Promise.all([removeFile(this.path), removeFile(this.recordFile)]).catch(() => undefined);
  }

  #open(): number {
    if (this.#fd === undefined) throw new LocalFileError(`${this.path} is closed.`);
    return this.#fd;
  }

  #close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  #closeQuietly(): void {
    try {
      this.#close();
    } catch {
      // Closing failed; what happens to the file next is what counts.
    }
  }

  #end(): void {
    this.#ended = true;
    claimedHere.delete(this.destination);
  }
}

function removeQuietly(path: string): void {
  // rm of a link removes the link, never its target.
  rmSync(path, { force: true });
}
