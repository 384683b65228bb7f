/**
 * `verify`: every held file in scope hashed, whatever its times say, and compared with the checksum recorded
 * when the tool verified it, or (a file the tool did not download) with the one the archive states; corrupt
 * files fetched again on request. Each pass leaves in the download record when each file was last found whole.
 */

import { lstat } from 'node:fs/promises';
import { abortedError, runPool } from '../core/batch.js';
import {
  type ChecksumAlgorithm,
  DIGEST_BYTES,
  type ExpectedChecksum,
  expectedChecksum,
  RunningChecksum,
  showDigest,
} from '../core/checksum.js';
import { AbortedError, ValidationError } from '../core/errors.js';
import { type FileHash, FileHashError, FileHashPool } from '../core/hash-pool.js';
import type { WithRequests } from '../core/settings.js';
import { scanLocalCopy } from '../coverage/local-copy.js';
import { statusParams } from '../coverage/run.js';
import { downloadFiles } from '../download/engine.js';
import type { DownloadHttp, DownloadProgress } from '../download/types.js';
import { type VerifiedEntry, VerifiedRecord } from '../download/verified.js';
import { discardBody } from '../http/body.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import type { HttpClient } from '../service/client.js';

/**
 * What a pass found of one file: `ok` (the bytes are those verified), `corrupt` (they are not), `unverifiable`
 * (no record, and the archive states no checksum to compare with), `extra` (not the archive's: not compared),
 * `unreadable` (it vanished or could not be read during the pass).
 */
export type VerifyStatus = 'ok' | 'corrupt' | 'unverifiable' | 'extra' | 'unreadable';

/** What a pass compared a file with. */
export type VerifiedAgainst = 'record' | 'archive' | 'download';

/** One file of a pass. */
export interface VerifyEntry {
  status: VerifyStatus;
  /** The storage path (the path below the data root). */
  path: string;
  localPath: string;
  /** The algorithm the file was hashed with, when it was. */
  algorithm?: ChecksumAlgorithm | undefined;
  /** What it was compared with: its line in the download record, the archive's stated checksum, or its bytes. */
  against?: VerifiedAgainst | undefined;
  /** For `corrupt`: the digest expected and the one the file has (hex for MD5, base64 for the others). */
  expected?: string | undefined;
  got?: string | undefined;
  /** Why, in words, for any status but `ok`. */
  reason?: string | undefined;
  /** For `corrupt` with `repair`: fetched again and verified, or why not. */
  repair?: { status: 'repaired' | 'failed'; error?: Error | undefined } | undefined;
}

/** Progress of a pass: files and bytes done of those in scope. */
export interface VerifyProgress {
  files: number;
  filesDone: number;
  bytes: number;
  bytesDone: number;
  /** While `repair` runs: the download's own progress. */
  repairing?: DownloadProgress | undefined;
}

/** How to verify. */
export interface VerifyOptions {
  /** The local data root. */
  dataDir: string;
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
  /**
   * Files the record does not vouch for and whose archive states no checksum without its body (an object under
   * SSE-KMS, or uploaded in parts): fetched whole and compared byte for byte, instead of `unverifiable`.
   */
  download?: boolean | undefined;
  /** Fetch each corrupt file again (past the record's trust); its old bytes are replaced only once the new verify. */
  repair?: boolean | undefined;
  /** Only files not verified since then (a nightly job verifies the part of the root whose turn it is). */
  notVerifiedSince?: Date | undefined;
  /** Hashing threads; default 2. */
  threads?: number | undefined;
  /** At most every 100 ms, and once at the end. */
  onProgress?: ((progress: VerifyProgress) => void) | undefined;
  /** Each file as soon as it is settled (before `repair`). */
  onFile?: ((entry: VerifyEntry) => void) | undefined;
}

/** What a pass found. */
export interface VerifyReport {
  /** Every file in scope but those skipped by `notVerifiedSince`, by path. */
  entries: VerifyEntry[];
  counts: Record<VerifyStatus, number>;
  /** Files of the archive held here and in scope. */
  heldFiles: number;
  /** Of them, files left out as verified since `notVerifiedSince`. */
  notDue: number;
  /** Bytes hashed. */
  bytes: number;
  /** Corrupt files fetched again and verified (with `repair`). */
  repaired: number;
}

/** The part of the HTTP client a pass uses. */
export type VerifyHttp = Pick<HttpClient, 'query'> & DownloadHttp;

/** Files in flight at once: enough to keep the threads busy while others wait on the archive. */
const FILES_IN_FLIGHT = 8;
const PROGRESS_EVERY_MS = 100;

/** The checksum a record line holds, when it is one of the algorithms known here. */
function recordedSum(
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

/** The checks `verify` makes of its options before anything is read. */
export function verifyParams(filters: QueryFilters, options: Pick<VerifyOptions, 'notVerifiedSince'>): void {
  statusParams(filters);
  const since = options.notVerifiedSince;
  if (since !== undefined && Number.isNaN(since.getTime())) {
    throw new ValidationError(['notVerifiedSince is not a valid date.']);
  }
}

/**
 * Verifies the files of the data root within the filters' scope (see `VerifyOptions`). Rejects with an
 * `AbortedError` carrying the entries settled so far as `results` when cancelled; the record keeps every
 * file settled before.
 */
export async function verifyFiles(
  http: VerifyHttp,
  filters: QueryFilters,
  options: VerifyOptions & WithRequests,
): Promise<VerifyReport> {
  verifyParams(filters, options);
  const params = statusParams(filters);
  const { signal } = options;
  const [records, local] = await Promise.all([
    http.query(params, { signal, pageSize: options.pageSize }),
    scanLocalCopy(options.dataDir, filters),
  ]);
  const archivePaths = new Set(records.map((record) => record.file_path));
  const record = await VerifiedRecord.open(options.dataDir);
  const pass = new VerifyPass(http, record, options);
  try {
    const held: Array<{ path: string; localPath: string }> = [];
    for (const entry of local) {
      if (!entry.file || !archivePaths.has(entry.file.path)) {
        pass.settle({
          status: 'extra',
          path: entry.path,
          localPath: entry.localPath,
          reason: entry.file ? 'not in the archive' : (entry.problem ?? 'breaks the naming rules'),
        });
      } else held.push(entry);
    }
    await pass.run(held);
    if (options.repair) await pass.repair();
    return pass.report(held.length);
  } catch (error) {
    if (signal?.aborted) {
      throw new AbortedError(abortedError(signal).message, {
        cause: signal.reason,
        results: pass.settledEntries(),
      });
    }
    throw error;
  } finally {
    record.close();
    pass.close();
  }
}

/** One pass over a data root: its files, its hashing threads, what it found. */
class VerifyPass {
  readonly #entries: VerifyEntry[] = [];
  readonly #pool: FileHashPool;
  readonly #progress: VerifyProgress = { files: 0, filesDone: 0, bytes: 0, bytesDone: 0 };
  #lastProgress = 0;
  #notDue = 0;
  #repaired = 0;

  constructor(
    private readonly http: VerifyHttp,
    private readonly record: VerifiedRecord,
    private readonly options: VerifyOptions & WithRequests,
  ) {
    this.#pool = new FileHashPool(options.threads, options.signal);
  }

  settle(entry: VerifyEntry): void {
    this.#entries.push(entry);
    this.options.onFile?.(entry);
  }

  settledEntries(): VerifyEntry[] {
    return [...this.#entries];
  }

  /** Measures the files due (their sizes give the progress its total), then settles each. */
  async run(held: ReadonlyArray<{ path: string; localPath: string }>): Promise<void> {
    const since = this.options.notVerifiedSince?.getTime();
    const due = held.filter((file) => {
      const at = this.record.recorded(file.path)?.at;
      const skip = since !== undefined && at !== undefined && at >= since;
      if (skip) this.#notDue += 1;
      return !skip;
    });
    const sizes = new Array<number | undefined>(due.length);
    await runPool(due.length, 32, async (index) => {
      const stats = await lstat((due[index] as { localPath: string }).localPath).catch(() => undefined);
      sizes[index] = stats?.size;
    });
    this.#progress.files = due.length;
    this.#progress.bytes = sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
    this.#tell(true);
    let stop: unknown;
    await runPool(due.length, FILES_IN_FLIGHT, async (index) => {
      if (stop !== undefined) return;
      const file = due[index] as { path: string; localPath: string };
      try {
        const entry = await this.#verifyOne(file.path, file.localPath, sizes[index]);
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

  async #verifyOne(path: string, localPath: string, size: number | undefined): Promise<VerifyEntry> {
    const { signal } = this.options;
    if (signal?.aborted) throw abortedError(signal);
    const base = { path, localPath };
    if (size === undefined) return { ...base, status: 'unreadable', reason: 'vanished during the pass' };
    const line = this.record.recorded(path);
    const recorded = recordedSum(line);
    if (line && recorded) {
      const known = { ...base, algorithm: recorded.algorithm, against: 'record' as const };
      if (size !== line.size) {
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
      const hashed = await this.#hash(localPath, recorded.algorithm, base);
      if ('status' in hashed) return hashed;
      if (hashed.digest.equals(recorded.digest)) {
        this.#markWhole(path, hashed, line.sum);
        return { ...known, status: 'ok' };
      }
      this.#markBad(line, `${recorded.algorithm}:${hashed.digest.toString('hex')}`);
      return this.#corrupt(known, recorded, hashed.digest, 'verified');
    }
    return this.#verifyWithArchive(path, localPath, size);
  }

  /** A file the record does not vouch for: compared with the archive's stated checksum, or its bytes. */
  async #verifyWithArchive(path: string, localPath: string, size: number): Promise<VerifyEntry> {
    const { signal } = this.options;
    const base = { path, localPath };
    let url: string;
    let stated: { size: number; expected: ExpectedChecksum | undefined };
    try {
      url = await this.http.resolveDownload(path, signal);
      stated = await probeObject(this.http, url, signal);
    } catch (error) {
      if (signal?.aborted) throw abortedError(signal);
      this.#progress.bytesDone += size;
      return {
        ...base,
        status: 'unverifiable',
        reason: `the archive could not be asked: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (stated.size !== size) {
      this.#progress.bytesDone += size;
      return {
        ...base,
        status: 'corrupt',
        against: 'archive',
        expected: `${stated.size} bytes`,
        got: `${size} bytes`,
        reason: `${size} bytes, the archive's has ${stated.size}`,
      };
    }
    if (stated.expected) {
      const { algorithm } = stated.expected;
      const hashed = await this.#hash(localPath, algorithm, base);
      if ('status' in hashed) return hashed;
      const known = { ...base, algorithm, against: 'archive' as const };
      if (!hashed.digest.equals(stated.expected.digest)) {
        return this.#corrupt(
          known,
          stated.expected,
          hashed.digest,
          `the archive's (${stated.expected.source})`,
        );
      }
      this.#markWhole(path, hashed, `${algorithm}:${stated.expected.digest.toString('hex')}`);
      return { ...known, status: 'ok' };
    }
    if (!this.options.download) {
      this.#progress.bytesDone += size;
      return {
        ...base,
        status: 'unverifiable',
        reason:
          'no record, and the archive states no checksum without the body (--download compares the bytes)',
      };
    }
    return this.#verifyByBytes(url, base);
  }

  /** `--download`: the object fetched whole and hashed beside the file, in the algorithm it states or MD5. */
  async #verifyByBytes(url: string, base: { path: string; localPath: string }): Promise<VerifyEntry> {
    const { signal } = this.options;
    let remote: { digest: Buffer; stated: ExpectedChecksum | undefined; algorithm: ChecksumAlgorithm };
    try {
      remote = await wholeObjectDigest(this.http, url, signal);
    } catch (error) {
      if (signal?.aborted) throw abortedError(signal);
      return {
        ...base,
        status: 'unverifiable',
        reason: `the archive's bytes could not be read: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const { algorithm } = remote;
    if (remote.stated && !remote.stated.digest.equals(remote.digest)) {
      return {
        ...base,
        status: 'unverifiable',
        reason: `the archive's bytes do not match its own ${remote.stated.source}`,
      };
    }
    const hashed = await this.#hash(base.localPath, algorithm, base);
    if ('status' in hashed) return hashed;
    const known = { ...base, algorithm, against: 'download' as const };
    if (!hashed.digest.equals(remote.digest)) {
      return this.#corrupt(
        known,
        { algorithm, digest: remote.digest },
        hashed.digest,
        "the archive's bytes'",
      );
    }
    this.#markWhole(base.path, hashed, `${algorithm}:${remote.digest.toString('hex')}`);
    return { ...known, status: 'ok' };
  }

  #corrupt(
    known: Omit<VerifyEntry, 'status'>,
    expected: { algorithm: ChecksumAlgorithm; digest: Buffer },
    got: Buffer,
    whose: string,
  ): VerifyEntry {
    return {
      ...known,
      status: 'corrupt',
      expected: showDigest(expected.algorithm, expected.digest),
      got: showDigest(expected.algorithm, got),
      reason: `its ${expected.algorithm} differs from ${whose === 'verified' ? 'the one verified' : whose}`,
    };
  }

  /** The file hashed, or the entry that says it could not be (vanished, unreadable). */
  async #hash(
    localPath: string,
    algorithm: ChecksumAlgorithm,
    base: { path: string; localPath: string },
  ): Promise<FileHash | VerifyEntry> {
    let counted = 0;
    try {
      const hashed = await this.#pool.hash(localPath, algorithm, (bytes) => {
        counted += bytes;
        this.#progress.bytesDone += bytes;
        this.#tell(false);
      });
      return hashed;
    } catch (error) {
      const { signal } = this.options;
      if (signal?.aborted) throw abortedError(signal);
      if (!(error instanceof FileHashError)) throw error;
      this.#progress.bytesDone -= counted;
      return {
        ...base,
        status: 'unreadable',
        reason: error.code === 'ENOENT' ? 'vanished during the pass' : `cannot be read: ${error.message}`,
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

  close(): void {
    this.#pool.close();
  }

  #tell(force: boolean): void {
    const now = Date.now();
    if (!this.options.onProgress || (!force && now - this.#lastProgress < PROGRESS_EVERY_MS)) return;
    this.#lastProgress = now;
    this.options.onProgress({ ...this.#progress });
  }
}

/**
 * What the archive states of an object without its body: its size and its ETag from a one-byte ranged GET (a URL
 * signed for GET cannot be used for HEAD); the ETag is an MD5 only for a single-part object without KMS.
 */
async function probeObject(
  http: DownloadHttp,
  url: string,
  signal: AbortSignal | undefined,
): Promise<{ size: number; expected: ExpectedChecksum | undefined }> {
  const probe = await http.getObject(url, { start: 0, end: 0, signal });
  discardBody(probe.body);
  const header = (name: string) => {
    const value = probe.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const range = /\/(\d+)\s*$/.exec(header('content-range') ?? '');
  const size = range ? Number(range[1]) : Number(header('content-length'));
  return { size, expected: expectedChecksum(probe.headers, probe.status === 200 && size <= 1) };
}

/** The object fetched whole and hashed as it streams: in the algorithm its answer states (checksum mode), or MD5. */
async function wholeObjectDigest(
  http: DownloadHttp,
  url: string,
  signal: AbortSignal | undefined,
): Promise<{ digest: Buffer; stated: ExpectedChecksum | undefined; algorithm: ChecksumAlgorithm }> {
  const answer = await http.getObject(url, { signal });
  const stated = answer.status === 200 ? expectedChecksum(answer.headers, true) : undefined;
  const algorithm = stated?.algorithm ?? 'md5';
  const running = new RunningChecksum(algorithm);
  const ended = await answer.body.consume((chunk) => running.update(chunk));
  if (ended !== undefined) throw ended instanceof Error ? ended : new Error(String(ended));
  return { digest: await running.digest(), stated, algorithm };
}

/** How many files a pass found in each state. */
export function countStatuses(entries: readonly VerifyEntry[]): Record<VerifyStatus, number> {
  const counts: Record<VerifyStatus, number> = {
    ok: 0,
    corrupt: 0,
    unverifiable: 0,
    extra: 0,
    unreadable: 0,
  };
  for (const entry of entries) counts[entry.status] += 1;
  return counts;
}
