/**
 * A held file the download record does not vouch for, compared with the archive: with the checksum it states
 * without the body (a one-byte ranged GET), or, with `download`, with its bytes fetched whole and hashed.
 */
import { abortedError } from '../core/batch.js';
import {
  type ChecksumAlgorithm,
  type ExpectedChecksum,
  RunningChecksum,
  showDigest,
} from '../core/checksums/checksum.js';
import type { FileHash } from '../core/checksums/hash-pool.js';
import { sumOf } from '../data-root/index.js';
import type { DownloadHttp } from '../download/types.js';
import { discardBody } from '../http/body.js';
import { statedChecksum } from '../http/stated-digest.js';
import type { VerifyEntry, VerifyHttp, VerifyOptions } from './verify-entries.js';

/** What a comparison asks of its pass: a file hashed on its threads, the record told, bytes passed over. */
export interface PassHashing {
  /** The file (of `size` bytes when measured) hashed, or the entry that says it could not be (vanished, unreadable). */
  hash(
    localPath: string,
    algorithm: ChecksumAlgorithm,
    base: { path: string; localPath: string },
    size: number,
  ): Promise<FileHash | VerifyEntry>;
  /** The record learns the file was found whole now. */
  markWhole(path: string, hashed: FileHash, sum: string): void;
  /** Bytes of a file settled without hashing, for the progress. */
  passOver(bytes: number): void;
}

/**
 * Files compared with the archive at once: the pass keeps many more files in flight for the hashing threads, but
 * asks the archive about no more at a time than it always did.
 */
const ARCHIVE_AT_ONCE = 8;

/** Compares held files with the archive's objects. */
export class ArchiveCheck {
  readonly #waiting: Array<() => void> = [];
  #asking = 0;

  constructor(
    private readonly http: VerifyHttp,
    private readonly options: Pick<VerifyOptions, 'signal' | 'download'>,
    private readonly pass: PassHashing,
  ) {}

  /** A file the record does not vouch for: compared with the archive's stated checksum, or its bytes. */
  async compare(path: string, localPath: string, size: number): Promise<VerifyEntry> {
    if (this.#asking < ARCHIVE_AT_ONCE) this.#asking += 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await this.#compare(path, localPath, size);
    } finally {
      // The turn goes to the next file waiting, if any.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#asking -= 1;
    }
  }

  async #compare(path: string, localPath: string, size: number): Promise<VerifyEntry> {
    const { signal } = this.options;
    const base = { path, localPath };
    let url: string;
    let stated: { size: number; expected: ExpectedChecksum | undefined };
    try {
      url = await this.http.resolveDownload(path, signal);
      stated = await probeObject(this.http, url, signal);
    } catch (error) {
      if (signal?.aborted) throw abortedError(signal);
      this.pass.passOver(size);
      return {
        ...base,
        status: 'unverifiable',
        reason: `the archive could not be asked: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (stated.size !== size) {
      this.pass.passOver(size);
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
      const hashed = await this.pass.hash(localPath, algorithm, base, size);
      if ('status' in hashed) return hashed;
      const known = { ...base, algorithm, against: 'archive' as const };
      if (!hashed.digest.equals(stated.expected.digest)) {
        return corruptEntry(
          known,
          stated.expected,
          hashed.digest,
          `the archive's (${stated.expected.source})`,
        );
      }
      this.pass.markWhole(path, hashed, sumOf(stated.expected));
      return { ...known, status: 'ok' };
    }
    if (!this.options.download) {
      this.pass.passOver(size);
      return {
        ...base,
        status: 'unverifiable',
        reason:
          'no record, and the archive states no checksum without the body (--download compares the bytes)',
      };
    }
    return this.#byBytes(url, base, size);
  }

  /** `--download`: the object fetched whole and hashed beside the file, in the algorithm it states or MD5. */
  async #byBytes(url: string, base: { path: string; localPath: string }, size: number): Promise<VerifyEntry> {
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
    const hashed = await this.pass.hash(base.localPath, algorithm, base, size);
    if ('status' in hashed) return hashed;
    const known = { ...base, algorithm, against: 'download' as const };
    if (!hashed.digest.equals(remote.digest)) {
      return corruptEntry(known, { algorithm, digest: remote.digest }, hashed.digest, "the archive's bytes'");
    }
    this.pass.markWhole(base.path, hashed, sumOf({ algorithm, digest: remote.digest }));
    return { ...known, status: 'ok' };
  }
}

/** The entry of a corrupt file: its digest and the one it was compared with (`whose`). */
export function corruptEntry(
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
  return {
    size,
    expected: statedChecksum(probe.headers, probe.status === 200 && size <= 1, probe.statedDigest),
  };
}

/** The object fetched whole and hashed as it streams: in the algorithm its answer states (checksum mode), or MD5. */
async function wholeObjectDigest(
  http: DownloadHttp,
  url: string,
  signal: AbortSignal | undefined,
): Promise<{ digest: Buffer; stated: ExpectedChecksum | undefined; algorithm: ChecksumAlgorithm }> {
  const answer = await http.getObject(url, { signal });
  const stated =
    answer.status === 200 ? statedChecksum(answer.headers, true, answer.statedDigest) : undefined;
  const algorithm = stated?.algorithm ?? 'md5';
  const running = new RunningChecksum(algorithm);
  const ended = await answer.body.consume((chunk) => running.update(chunk));
  if (ended !== undefined) throw ended instanceof Error ? ended : new Error(String(ended));
  return { digest: await running.digest(), stated, algorithm };
}
