/**
 * What an object store says about an object's bytes, and the running hash that checks them as they stream.
 * S3 and its kin say it in `Content-MD5`, in `x-amz-checksum-*` headers, or in an ETag that is the plain MD5 of
 * the object: only its single-part form of an object stored without SSE-KMS, DSSE-KMS or SSE-C (a multipart
 * ETag `…-N`, and the ETag of an object encrypted so, is not an MD5 and is never taken for one).
 */
import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
// CRC-32C and CRC-64/NVME: the AWS SDK's own implementations (slicing-by-8 tables, checked against the
// catalogue's check values in test/unit/s3-rules.test.ts); Node has neither. Loaded on first use only: most
// objects state none of them, and every command's start-up would pay for the module.
import type { Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { crc32Combine } from './crc32-combine.js';

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

  constructor(readonly algorithm: ChecksumAlgorithm) {
    if (algorithm === 'crc32c' || algorithm === 'crc64nvme') {
      this.#early = [];
      void loadCrcModule().catch(() => undefined);
      this.#makeTable();
    } else if (algorithm !== 'crc32') this.#hash = createHash(algorithm);
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
    else this.#crc = crc32(chunk, this.#crc);
  }

  async digest(): Promise<Buffer> {
    if (this.#hash) return this.#hash.digest();
    if (this.#early) {
      await loadCrcModule();
      this.#makeTable();
    }
    if (this.#table) return Buffer.from(await this.#table.digest());
    const out = Buffer.alloc(4);
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

/** Bytes `[start, start + length)` of a part, hashed as they arrived. */
interface HashedRange {
  readonly start: number;
  length: number;
  crc: number;
}

/**
 * The CRC-32 of a part whose ranges land out of order (parallel parts), without reading back what arrived: each
 * range is hashed in the receiving thread as its bytes come (`feedFrom`; zlib's CRC-32 runs at GB/s), and
 * `catchUp` joins the ranges in byte order (`crc32Combine`). Bytes no feed of this object brought (what an
 * earlier run left on disk) are read back from the part, so every byte the digest covers was hashed: as it
 * arrived, or as it lies on disk.
 */
export class CombinedCrc32 implements PartChecksum {
  readonly algorithm = 'crc32';
  /** The CRC-32 of bytes `[0, covered)`. */
  #crc = 0;
  #covered: number;
  /** Ranges hashed as they came and not yet in the prefix, by first byte. */
  readonly #ranges = new Map<number, HashedRange>();

  constructor(
    private readonly readBack: (length: number, consume: (chunk: Buffer) => void, from: number) => void,
    from = 0,
  ) {
    this.#covered = from;
  }

  /** Bytes right after the hashed prefix, in order (one stream). */
  update(chunk: Buffer): void {
    this.#crc = crc32(chunk, this.#crc);
    this.#covered += chunk.length;
  }

  flushed(): void {
    // Fed as the bytes arrived.
  }

  /**
   * A new range from `position`; one fed there before is replaced (its bytes are written over). Feeds do not
   * overlap otherwise (a download's spans are apart, and a span resumed after a dropped connection is fed anew
   * from where its bytes end); bytes two of them hold are read back.
   */
  feedFrom(position: number): ChecksumFeed {
    const range: HashedRange = { start: position, length: 0, crc: 0 };
    this.#ranges.set(position, range);
    return {
      update: (chunk) => {
        range.crc = crc32(chunk, range.crc);
        range.length += chunk.length;
      },
    };
  }

  /**
   * Extends the prefix to `upTo`: with the range hashed from there when it ends within `upTo` and no other range
   * holds any of its bytes (two feeds over the same bytes: which of them is on disk is not known), otherwise by
   * reading the part back up to where the next range starts.
   */
  catchUp(upTo: number): void {
    while (this.#covered < upTo) {
      const at = this.#covered;
      const range = this.#ranges.get(at);
      let next = upTo;
      for (const other of this.#ranges.values()) {
        if (other.start > at && other.start < next) next = other.start;
      }
      if (range !== undefined && range.length > 0 && at + range.length <= next && !this.#overlapped(range)) {
        this.#ranges.delete(at);
        this.#crc = crc32Combine(this.#crc, range.crc, range.length);
        this.#covered = at + range.length;
        continue;
      }
      let crc = 0;
      this.readBack(next - at, (chunk) => (crc = crc32(chunk, crc)), at);
      this.#crc = crc32Combine(this.#crc, crc, next - at);
      this.#covered = next;
    }
    // A range inside the prefix is done with; one that reaches past it still says which bytes are in doubt.
    for (const [start, range] of this.#ranges) {
      if (start < this.#covered && start + range.length <= this.#covered) this.#ranges.delete(start);
    }
  }

  /** True when another range holds some of the bytes of `range`. */
  #overlapped(range: HashedRange): boolean {
    const end = range.start + range.length;
    for (const other of this.#ranges.values()) {
      if (
        other !== range &&
        other.length > 0 &&
        other.start < end &&
        other.start + other.length > range.start
      )
        return true;
    }
    return false;
  }

  digest(): Promise<Buffer> {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.#crc >>> 0);
    return Promise.resolve(out);
  }

  close(): void {
    this.#ranges.clear();
  }
}

/**
 * The hashing thread's code: it reads the part file (from the page cache, through the descriptor the receiving
 * thread writes with: threads share a process's descriptors) up to where it is told the bytes are, in order.
 */
const HASHER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { crc32 } = require('node:zlib');
const { fd, algorithm } = workerData;
const hash = algorithm === 'crc32' ? undefined : createHash(algorithm);
let crc = 0;
let covered = 0;
const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
parentPort.on('message', (message) => {
  try {
    while (covered < message.upTo) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, message.upTo - covered), covered);
      if (read === 0) throw new Error('the part file ends at byte ' + covered);
      const chunk = buffer.subarray(0, read);
      if (hash) hash.update(chunk);
      else crc = crc32(chunk, crc);
      covered += read;
    }
    if (message.digest) {
      let digest;
      if (hash) digest = hash.digest();
      else { digest = Buffer.alloc(4); digest.writeUInt32BE(crc >>> 0); }
      parentPort.postMessage({ digest });
    }
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
});
`;

/**
 * Hashes on a thread of its own, reading the part file behind the writes: on a machine of two cores, receiving
 * and hashing a large object then overlap instead of adding up (MD5 runs at ~700 MB/s on one core).
 */
export class BackgroundChecksum implements PartChecksum {
  readonly #worker: Worker;
  readonly #answer: Promise<Buffer>;
  #sent = 0;

  constructor(
    readonly algorithm: ChecksumAlgorithm,
    fd: number,
  ) {
    this.#worker = new Worker(HASHER_SOURCE, { eval: true, workerData: { fd, algorithm } });
    this.#answer = new Promise((resolve, reject) => {
      this.#worker.on('message', (message: { digest?: Uint8Array; error?: string }) => {
        if (message.digest) resolve(Buffer.from(message.digest));
        else reject(new Error(`Cannot hash the part file: ${message.error ?? 'unknown error'}`));
      });
      this.#worker.on('error', reject);
    });
    this.#answer.catch(() => undefined);
  }

  update(): void {
    // The thread reads the bytes from the file once they are flushed.
  }

  flushed(position: number): void {
    this.catchUp(position);
  }

  catchUp(upTo: number): void {
    if (upTo <= this.#sent) return;
    this.#sent = upTo;
    this.#worker.postMessage({ upTo });
  }

  digest(): Promise<Buffer> {
    this.#worker.postMessage({ upTo: this.#sent, digest: true });
    return this.#answer;
  }

  close(): void {
    void this.#worker.terminate();
  }
}
