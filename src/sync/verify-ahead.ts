/**
 * The files a `verify` pass will compare with their record lines, hashed while the archive is still being asked:
 * the root is listed long before the archive answers (a query, perhaps of an index in PostgreSQL, its pages one
 * after the other), and the hashing threads would otherwise wait for it. Nothing is settled or recorded here: a
 * result waits for the pass, which takes it only for a file the archive holds.
 */

import { runPool } from '../core/batch.js';
import { type ChecksumAlgorithm, DIGEST_BYTES } from '../core/checksums/checksum.js';
import {
  type FileHash,
  type FileHashPool,
  JOBS_PER_THREAD,
  type SizeDiffers,
} from '../core/checksums/hash-pool.js';
import type { VerifiedEntry, VerifiedRecord } from '../data-root/index.js';

/** Files in flight beyond what the threads hold: enough to keep them busy while others wait on the archive. */
export const FILES_WAITING = 8;

/** The checksum a record line holds, when it is one of the algorithms known here. */
export function recordedSum(
  entry: Readonly<VerifiedEntry> | undefined,
): { algorithm: ChecksumAlgorithm; digest: Buffer } | undefined {
  if (!entry || typeof entry.sum !== 'string') return undefined;
  const at = entry.sum.indexOf(':');
  const algorithm = entry.sum.slice(0, at) as ChecksumAlgorithm;
  const hex = entry.sum.slice(at + 1);
  const bytes = DIGEST_BYTES[algorithm];
  if (at < 0 || bytes === undefined || !/^[0-9a-f]+$/.test(hex) || hex.length !== bytes * 2) return undefined;
  return { algorithm, digest: Buffer.from(hex, 'hex') };
}

/** Whether a file is due for this pass: not verified since `since` (milliseconds; undefined: every file is). */
export function isDue(record: VerifiedRecord, path: string, since: number | undefined): boolean {
  if (since === undefined) return true;
  const at = record.recorded(path)?.at;
  return at === undefined || at < since;
}

/** One file hashed ahead: as the pass would ask for it (its record's algorithm and size), and its outcome. */
interface Started {
  algorithm: ChecksumAlgorithm;
  expected: number;
  outcome: Promise<FileHash | SizeDiffers>;
}

/** Files hashed while the archive is asked, for the pass to take once it answered. */
export class HashAhead {
  readonly #started = new Map<string, Started>();
  #open = true;

  constructor(
    private readonly pool: FileHashPool,
    private readonly record: VerifiedRecord,
  ) {}

  /**
   * Hashes `paths` (in the order the pass will take them) that are due and have a record line with a checksum, as
   * many at once as the pass would, until `until` settles (the archive answered, or could not be asked).
   */
  start(
    paths: readonly string[],
    localPathOf: (path: string) => string,
    since: number | undefined,
    until: Promise<unknown>,
  ): void {
    const stop = () => {
      this.#open = false;
    };
    until.then(stop, stop);
    const inFlight = this.pool.threads * JOBS_PER_THREAD + FILES_WAITING;
    void runPool(paths.length, inFlight, async (index) => {
      if (!this.#open) return;
      const path = paths[index] as string;
      const line = this.record.recorded(path);
      const recorded = recordedSum(line);
      if (!line || !recorded || !isDue(this.record, path, since)) return;
      const outcome = this.pool.hashIfSize(localPathOf(path), recorded.algorithm, line.size);
      this.#started.set(path, { algorithm: recorded.algorithm, expected: line.size, outcome });
      // A failure is the pass's to tell (it takes the same outcome), or nobody's for a file it never takes.
      await outcome.catch(() => undefined);
    });
  }

  /**
   * The outcome of the file at `path` hashed ahead as the pass asks for it now (`algorithm`, `expected` bytes);
   * undefined when it was not, so that the pass hashes it itself. Each outcome is taken once.
   */
  take(
    path: string,
    algorithm: ChecksumAlgorithm,
    expected: number,
  ): Promise<FileHash | SizeDiffers> | undefined {
    const started = this.#started.get(path);
    if (!started) return undefined;
    this.#started.delete(path);
    return started.algorithm === algorithm && started.expected === expected ? started.outcome : undefined;
  }

  /** Stops starting files, and forgets the outcomes no file took (of files the archive does not hold). */
  close(): void {
    this.#open = false;
    this.#started.clear();
  }
}
