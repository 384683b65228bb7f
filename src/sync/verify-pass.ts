/**
 * One `verify` pass over a data root: the files due measured, each hashed on the pool's threads and compared with
 * its record line (or the archive's object), the record told what was found, and corrupt files fetched again on
 * request.
 */

import { lstatSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { abortedError, runPool } from '../core/batch.js';
import type { WithRequests } from '../core/call-settings.js';
import type { ChecksumAlgorithm } from '../core/checksums/checksum.js';
import {
  type FileHash,
  FileHashError,
  type FileHashPool,
  JOBS_PER_THREAD,
  type SizeDiffers,
} from '../core/checksums/hash-pool.js';
import { sumOf, type VerifiedEntry, type VerifiedRecord } from '../data-root/index.js';
import { FILES_WAITING, type HashAhead, isDue, recordedSum } from './verify-ahead.js';
import { ArchiveCheck, corruptEntry } from './verify-archive.js';
import {
  countStatuses,
  type VerifyEntry,
  type VerifyHttp,
  type VerifyOptions,
  type VerifyProgress,
  type VerifyReport,
} from './verify-entries.js';

const PROGRESS_EVERY_MS = 100;

/** One pass over a data root: its files, its hashing threads, what it found. */
export class VerifyPass {
  readonly #entries: VerifyEntry[] = [];
  readonly #pool: FileHashPool;
  readonly #archive: ArchiveCheck;
  readonly #progress: VerifyProgress = { files: 0, filesDone: 0, bytes: 0, bytesDone: 0 };
  #lastProgress = 0;
  #notDue = 0;
  #repaired = 0;

  readonly #ahead: HashAhead | undefined;

  /** `pool` hashes the files (its owner closes it); `ahead` holds those it hashed before the pass began. */
  constructor(
    private readonly http: VerifyHttp,
    private readonly record: VerifiedRecord,
    private readonly options: VerifyOptions & WithRequests,
    pool: FileHashPool,
    ahead?: HashAhead,
  ) {
    this.#pool = pool;
    this.#ahead = ahead;
    this.#archive = new ArchiveCheck(http, options, {
      hash: (localPath, algorithm, base, size) =>
        this.#hash(localPath, algorithm, base, { hint: size }) as Promise<FileHash | VerifyEntry>,
      markWhole: (path, hashed, sum) => this.#markWhole(path, hashed, sum),
      passOver: (bytes) => {
        this.#progress.bytesDone += bytes;
      },
    });
  }

  settle(entry: VerifyEntry): void {
    this.#entries.push(entry);
    this.options.onFile?.(entry);
  }

  settledEntries(): VerifyEntry[] {
    return [...this.#entries];
  }

  /**
   * Settles each file due. With a progress to tell, the files are measured first (their sizes give it its total);
   * otherwise each is measured as its turn comes, on the hashing threads for a file the record vouches for.
   */
  async run(held: readonly string[], localPathOf: (path: string) => string): Promise<void> {
    const since = this.options.notVerifiedSince?.getTime();
    const due = held.filter((path) => isDue(this.record, path, since));
    this.#notDue = held.length - due.length;
    const sizes = this.options.onProgress ? await measure(due.map(localPathOf)) : undefined;
    this.#progress.files = due.length;
    this.#progress.bytes = sizes?.reduce<number>((sum, size) => sum + (size ?? 0), 0) ?? 0;
    this.#tell(true);
    let stop: unknown;
    const inFlight = this.#pool.threads * JOBS_PER_THREAD + FILES_WAITING;
    await runPool(due.length, inFlight, async (index) => {
      if (stop !== undefined) return;
      const path = due[index] as string;
      try {
        const measured = sizes ? { size: sizes[index] } : undefined;
        const entry = await this.#verifyOne(path, localPathOf(path), measured);
        // Answers come in batches: once cancelled, none settles any more file.
        if (this.options.signal?.aborted) throw abortedError(this.options.signal);
        this.settle(entry);
      } catch (error) {
        stop ??= error;
      }
      this.#progress.filesDone += 1;
      this.#tell(false);
    });
    if (stop !== undefined) throw stop;
    this.#tell(true);
    this.record.flush();
  }

  /**
   * One file compared with its record line or the archive. `measured` holds its size when it was measured before
   * the pass (undefined when it could not be); without it, the file is measured now.
   */
  async #verifyOne(
    path: string,
    localPath: string,
    measured: { size: number | undefined } | undefined,
  ): Promise<VerifyEntry> {
    const { signal } = this.options;
    if (signal?.aborted) throw abortedError(signal);
    const base = { path, localPath };
    const vanished: VerifyEntry = { ...base, status: 'unreadable', reason: 'vanished during the pass' };
    if (measured && measured.size === undefined) return vanished;
    const line = this.record.recorded(path);
    const recorded = recordedSum(line);
    if (line && recorded) {
      const known = { ...base, algorithm: recorded.algorithm, against: 'record' as const };
      if (measured?.size !== undefined && measured.size !== line.size) {
        return this.#sizeDiffers(known, line, measured.size);
      }
      const hashed = await this.#hash(localPath, recorded.algorithm, base, { expected: line.size });
      if ('status' in hashed) return hashed;
      if ('sizeDiffers' in hashed) return this.#sizeDiffers(known, line, hashed.size);
      if (hashed.digest.equals(recorded.digest)) {
        this.#markWhole(path, hashed, line.sum);
        return { ...known, status: 'ok' };
      }
      this.#markBad(line, sumOf({ ...recorded, digest: hashed.digest }));
      return corruptEntry(known, recorded, hashed.digest, 'verified');
    }
    const size = measured ? measured.size : (await lstat(localPath).catch(() => undefined))?.size;
    if (size === undefined) return vanished;
    return this.#archive.compare(path, localPath, size);
  }

  /** A file whose size is not the one verified: corrupt, without reading it. */
  #sizeDiffers(known: Omit<VerifyEntry, 'status'>, line: Readonly<VerifiedEntry>, size: number): VerifyEntry {
    this.#progress.bytesDone += size;
    this.#markBad(line, `size:${size}`);
    return {
      ...known,
      status: 'corrupt',
      expected: `${line.size} bytes`,
      got: `${size} bytes`,
      reason: `${size} bytes, ${line.size} when verified`,
    };
  }

  /**
   * The file hashed, or the entry that says it could not be (vanished, unreadable). With `size.expected`, it is
   * measured first and read only when it has that size (otherwise its size is the answer); `size.hint` is its size
   * as measured.
   */
  async #hash(
    localPath: string,
    algorithm: ChecksumAlgorithm,
    base: { path: string; localPath: string },
    size: { expected?: number; hint?: number },
  ): Promise<FileHash | SizeDiffers | VerifyEntry> {
    let counted = 0;
    const onBytes = (bytes: number) => {
      counted += bytes;
      this.#progress.bytesDone += bytes;
      this.#tell(false);
    };
    try {
      if (size.expected !== undefined) {
        const early = await this.#ahead?.take(base.path, algorithm, size.expected)?.catch(() => undefined);
        if (early && !('sizeDiffers' in early) && unchanged(localPath, early)) {
          onBytes(early.size);
          return early;
        }
        return await this.#pool.hashIfSize(localPath, algorithm, size.expected, onBytes);
      }
      if (size.hint !== undefined)
        return await this.#pool.hashSized(localPath, algorithm, size.hint, onBytes);
      return await this.#pool.hash(localPath, algorithm, onBytes);
    } catch (error) {
      const { signal } = this.options;
      if (signal?.aborted) throw abortedError(signal);
      if (!(error instanceof FileHashError)) throw error;
      this.#progress.bytesDone -= counted;
      // A file that cannot even be measured counts as vanished, as when it is measured before the pass.
      const gone = error.measuring || error.code === 'ENOENT';
      return {
        ...base,
        status: 'unreadable',
        reason: gone ? 'vanished during the pass' : `cannot be read: ${error.message}`,
      };
    }
  }

  /** The record learns the file was found whole now, with the stats of the bytes hashed. */
  #markWhole(path: string, hashed: FileHash, sum: string): void {
    this.record.remember({
      p: path,
      size: hashed.size,
      mtimeMs: hashed.mtimeMs,
      ino: hashed.ino,
      sum,
      at: Date.now(),
    });
  }

  /** The record's line stops vouching for the file (until a download or a pass finds it whole again). */
  #markBad(line: Readonly<VerifiedEntry>, got: string): void {
    this.record.remember({ ...line, bad: got });
  }

  /** `repair`: each corrupt file fetched again through the download engine, past the record's trust. */
  async repair(): Promise<void> {
    const corrupt = this.#entries.filter((entry) => entry.status === 'corrupt');
    if (corrupt.length === 0) return;
    this.record.flush();
    // Loaded only to repair: a pass that finds nothing corrupt never parses the download engine.
    const { downloadFiles } = await import('../download/engine.js');
    const results = await downloadFiles(
      this.http,
      corrupt.map((entry) => entry.path),
      {
        dataDir: this.options.dataDir,
        force: true,
        // Bytes that cannot be verified never replace the old ones.
        requireChecksum: true,
        requests: this.options.requests,
        signal: this.options.signal,
        onProgress: (repairing) => this.options.onProgress?.({ ...this.#progress, repairing }),
      },
    );
    if (this.options.signal?.aborted) throw abortedError(this.options.signal);
    const byPath = new Map(results.map((result) => [result.path, result]));
    for (const entry of corrupt) {
      const result = byPath.get(entry.path);
      const fixed = result && result.status !== 'failed' && result.verified;
      entry.repair = fixed
        ? { status: 'repaired' }
        : { status: 'failed', error: result?.error ?? new Error('not fetched again') };
      if (fixed) this.#repaired += 1;
    }
  }

  report(heldFiles: number): VerifyReport {
    const entries = [...this.#entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return {
      entries,
      counts: countStatuses(entries),
      heldFiles,
      notDue: this.#notDue,
      bytes: this.#progress.bytesDone,
      repaired: this.#repaired,
    };
  }

  #tell(force: boolean): void {
    if (!this.options.onProgress) return;
    const now = Date.now();
    if (!force && now - this.#lastProgress < PROGRESS_EVERY_MS) return;
    this.#lastProgress = now;
    this.options.onProgress({ ...this.#progress });
  }
}

/**
 * Whether the file at `localPath` is still the one `hashed` read (hashed ahead, a while before its turn): the same
 * inode, size and modification time. One gone, replaced or written to since is hashed again at its turn.
 */
function unchanged(localPath: string, hashed: FileHash): boolean {
  const now = lstatSync(localPath, { throwIfNoEntry: false });
  return (
    now?.isFile() === true &&
    now.ino === hashed.ino &&
    now.size === hashed.size &&
    now.mtimeMs === hashed.mtimeMs
  );
}

/** The sizes of the files at `localPaths` (undefined for one that cannot be measured), measured 32 at a time. */
async function measure(localPaths: readonly string[]): Promise<Array<number | undefined>> {
  const sizes = new Array<number | undefined>(localPaths.length);
  await runPool(localPaths.length, 32, async (index) => {
    const stats = await lstat(localPaths[index] as string).catch(() => undefined);
    sizes[index] = stats?.size;
  });
  return sizes;
}
