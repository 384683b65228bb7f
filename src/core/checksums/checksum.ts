/**
 * What an object store says about an object's bytes, and the running hash that checks them as they stream.
 * S3 and its kin say it in `Content-MD5`, in `x-amz-checksum-*` headers, or in an ETag that is the plain MD5 of
 * the object: only its single-part form of an object stored without SSE-KMS, DSSE-KMS or SSE-C (a multipart
 * ETag `…-N`, and the ETag of an object encrypted so, is not an MD5 and is never taken for one).
 */
import type { Hash } from 'node:crypto';
// CRC-32C and CRC-64/NVME: the AWS SDK's own implementations (slicing-by-8 tables, checked against the
// catalogue's check values in test/unit/s3-rules.test.ts); Node has neither. Loaded on first use only: most
// objects state none of them, and every command's start-up would pay for the module.
import type { Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { cryptoModule, zlibModule } from '../on-first-use.js';

type CrcModule = typeof import('@aws-sdk/checksums/crc');
let crcModule: CrcModule | undefined;
let crcLoading: Promise<CrcModule> | undefined;

function loadCrcModule(): Promise<CrcModule> {
  crcLoading ??= import('@aws-sdk/checksums/crc').then((loaded) => {
    crcModule = loaded;
    return loaded;
  });
  return crcLoading;
}

/** An algorithm a store states a checksum in. */
export type ChecksumAlgorithm = 'md5' | 'sha256' | 'sha1' | 'crc32' | 'crc32c' | 'crc64nvme';

/**
 * Bytes read per call where a file is read back to be hashed (`verify`'s threads, a large download's hashing
 * thread, a resumed part): the read lands in a buffer the hash then reads, and a buffer that stays in the core's
 * own cache is read back from there. Measured on 2,000 files of 1 MiB, MD5 on two threads from the page cache:
 * 1.56-1.59 s with 256 KiB reads, 1.62-1.81 s with 4 MiB ones, 1.63-1.64 s with 32 KiB ones; the system's copy into
 * a 4 MiB buffer cost four times `md5sum`'s into its 32 KiB one. A download of 1 GiB checked by CRC-32 on its
 * hashing thread spent 1.01 s of CPU against 1.14 s with 4 MiB reads (medians of 9, written to memory).
 */
export const HASH_READ_BYTES = 256 * 1024;

/** Bytes of a digest of each algorithm. */
export const DIGEST_BYTES: Readonly<Record<ChecksumAlgorithm, number>> = {
  md5: 16,
  sha256: 32,
  sha1: 20,
  crc32: 4,
  crc32c: 4,
  crc64nvme: 8,
};

/** A checksum the store stated for the whole object. */
export interface ExpectedChecksum {
  algorithm: ChecksumAlgorithm;
  digest: Buffer;
  /** The header it came from, for messages. */
  source: string;
}

type Headers = Record<string, string | string[] | undefined>;

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim();
}

function base64Digest(value: string | undefined, bytes: number): Buffer | undefined {
  if (value === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return undefined;
  const digest = Buffer.from(value, 'base64');
  return digest.length === bytes ? digest : undefined;
}

/**
 * False when the answer says the object is stored encrypted with SSE-KMS, DSSE-KMS or SSE-C: S3 documents
 * that the ETag of such an object is not the MD5 of its data.
 */
export function etagMayBeMd5(headers: Headers): boolean {
  const encryption = headerValue(headers, 'x-amz-server-side-encryption')?.toLowerCase();
  if (encryption === 'aws:kms' || encryption === 'aws:kms:dsse') return false;
  return headerValue(headers, 'x-amz-server-side-encryption-customer-algorithm') === undefined;
}

/** The object's MD5 when its ETag is one (32 hex digits, quoted or weak-free); undefined otherwise. */
export function md5FromEtag(etag: string | undefined): Buffer | undefined {
  const match = etag === undefined ? null : /^"?([0-9a-fA-F]{32})"?$/.exec(etag.trim());
  return match ? Buffer.from(match[1] as string, 'hex') : undefined;
}

/**
 * The checksums an answer may state for the whole body, cheapest to compute first: each of them catches bytes
 * damaged in transfer or in storage, and none guards against a store that states a wrong one, so the cheapest
 * one stated is used. CRC-32 runs at about three times the speed of MD5 here (zlib's, in Node); CRC-32C and
 * CRC-64/NVME are JavaScript (about 200 MB/s), so last.
 */
const BODY_CHECKSUMS: ReadonlyArray<[ChecksumAlgorithm, string, number]> = [
  ['crc32', 'x-amz-checksum-crc32', 4],
  ['md5', 'content-md5', 16],
  ['sha1', 'x-amz-checksum-sha1', 20],
  ['sha256', 'x-amz-checksum-sha256', 32],
  ['crc64nvme', 'x-amz-checksum-crc64nvme', 8],
  ['crc32c', 'x-amz-checksum-crc32c', 4],
];

/** How messages name the header a checksum came from. */
const SOURCE_NAMES: Record<string, string> = { 'content-md5': 'Content-MD5' };

/**
 * The checksum of the whole object an answer states. `whole` says the answer carries the whole object (200):
 * `Content-MD5` and `x-amz-checksum-*` describe the body, so a 206 only lends its ETag, and only when the ETag
 * is the object's MD5 (see `etagMayBeMd5`); undefined when the answer states none (never a guess, which would
 * report a perfect file as damaged).
 */
export function expectedChecksum(headers: Headers, whole: boolean): ExpectedChecksum | undefined {
  if (whole) {
    for (const [algorithm, name, bytes] of BODY_CHECKSUMS) {
      // A composite checksum of a multipart object ends in `-N`: not a checksum of the bytes, skipped.
      const digest = base64Digest(headerValue(headers, name), bytes);
      if (digest) return { algorithm, digest, source: SOURCE_NAMES[name] ?? name };
    }
  }
  const fromEtag = etagMayBeMd5(headers) ? md5FromEtag(headerValue(headers, 'etag')) : undefined;
  return fromEtag ? { algorithm: 'md5', digest: fromEtag, source: 'ETag' } : undefined;
}

/** A running hash of one algorithm, fed in byte order. */
export class RunningChecksum {
  readonly #hash: Hash | undefined;
  #table: Crc32c | Crc64Nvme | undefined;
  /** Copies of the bytes fed before the CRC module was loaded (a table algorithm only). */
  #early: Buffer[] | undefined;
  #crc = 0;
  /** zlib's CRC-32, for that algorithm. */
  readonly #crc32: typeof import('node:zlib').crc32 | undefined;

  constructor(readonly algorithm: ChecksumAlgorithm) {
    if (algorithm === 'crc32') this.#crc32 = zlibModule().crc32;
    if (algorithm === 'crc32c' || algorithm === 'crc64nvme') {
      this.#early = [];
      void loadCrcModule().catch(() => undefined);
      this.#makeTable();
    } else if (algorithm !== 'crc32') this.#hash = cryptoModule().createHash(algorithm);
  }

  /** Makes the CRC table once its module is loaded, and feeds it what came before. */
  #makeTable(): void {
    if (this.#table || !crcModule || !this.#early) return;
    this.#table = this.algorithm === 'crc32c' ? new crcModule.Crc32c() : new crcModule.Crc64Nvme();
    for (const chunk of this.#early) this.#table.update(chunk);
    this.#early = undefined;
  }

  update(chunk: Buffer): void {
    if (this.#hash) this.#hash.update(chunk);
    else if (this.#early) {
      this.#makeTable();
      if (this.#table) this.#table.update(chunk);
      // The caller may reuse its buffer: what waits for the module is copied.
      else this.#early.push(Buffer.from(chunk));
    } else if (this.#table) this.#table.update(chunk);
    else if (this.#crc32) this.#crc = this.#crc32(chunk, this.#crc);
  }

  async digest(): Promise<Buffer> {
    if (this.#hash) return this.#hash.digest();
    if (this.#early) {
      await loadCrcModule();
      this.#makeTable();
    }
    if (this.#table) return Buffer.from(await this.#table.digest());
    // All four bytes are written: a slice of Node's pool serves, rather than a buffer of its own.
    const out = Buffer.allocUnsafe(4);
    out.writeUInt32BE(this.#crc >>> 0);
    return out;
  }
}

/** True for the algorithms the hashing thread computes (Node's own); the others hash in the receiving thread. */
export function hashesInBackground(algorithm: ChecksumAlgorithm): boolean {
  return algorithm !== 'crc32c' && algorithm !== 'crc64nvme';
}

/** A digest as messages show it: hex for MD5 (as ETags show it), base64 for the others (as their headers do). */
export function showDigest(algorithm: ChecksumAlgorithm, digest: Buffer): string {
  return algorithm === 'md5' ? digest.toString('hex') : digest.toString('base64');
}

/**
 * The checksum of an object as it lands in its part file, in byte order. Bytes that arrive in order may be fed
 * as they come (`update`); bytes already on disk (a resumed part, parts fetched out of order) are hashed from the
 * file up to a point (`catchUp`). `flushed` says how far the part file holds the bytes fed so far. A checksum
 * that can join ranges hashed apart (`CombinedCrc32`) also takes the bytes of a range as they arrive
 * (`feedFrom`), so that `catchUp` need not read them back.
 */
export interface PartChecksum {
  /** Undefined for `NoChecksum`. */
  readonly algorithm: ChecksumAlgorithm | undefined;
  update(chunk: Buffer): void;
  flushed(position: number): void;
  catchUp(upTo: number): void;
  digest(): Promise<Buffer>;
  close(): void;
  /**
   * A feed of the bytes written to the part from `position` on, in order, as they arrive (a write that fails
   * ends the download: a byte fed is a byte on disk); absent when the checksum reads out-of-order bytes back.
   */
  feedFrom?(position: number): ChecksumFeed;
}

/** Bytes of one range of a part, in order, as they arrive. */
export interface ChecksumFeed {
  update(chunk: Buffer): void;
}

/**
 * Computes nothing: for an object whose store states no checksum (an SSE-KMS or multipart object without
 * `x-amz-checksum-*`), where a hash would have nothing to be compared with and would only cost time.
 */
export class NoChecksum implements PartChecksum {
  readonly algorithm = undefined;
  update(): void {}
  flushed(): void {}
  catchUp(): void {}
  digest(): Promise<Buffer> {
    return Promise.resolve(Buffer.alloc(0));
  }
  close(): void {}
}

/** Hashes in the receiving thread: for small objects, where starting a thread would cost more. */
export class InlineChecksum implements PartChecksum {
  readonly #running: RunningChecksum;
  #covered: number;

  constructor(
    readonly algorithm: ChecksumAlgorithm,
    private readonly readBack: (length: number, consume: (chunk: Buffer) => void, from: number) => void,
    from = 0,
  ) {
    this.#running = new RunningChecksum(algorithm);
    this.#covered = from;
  }

  update(chunk: Buffer): void {
    this.#running.update(chunk);
    this.#covered += chunk.length;
  }

  flushed(): void {
    // Fed as the bytes arrived.
  }

  catchUp(upTo: number): void {
    if (upTo <= this.#covered) return;
    this.readBack(upTo - this.#covered, (chunk) => this.#running.update(chunk), this.#covered);
    this.#covered = upTo;
  }

  digest(): Promise<Buffer> {
    return this.#running.digest();
  }

  close(): void {
    // Nothing held.
  }
}
