/** The checksums of objects in S3: computed while bytes pass, kept as user metadata, read back from it. */

import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import type { Digests } from './checksums.js';
import { PutRejected } from './object-store.js';

/** The user-metadata names (`x-amz-meta-…`) the checksums are kept under, hex or decimal. */
const META = { md5: 'md5', sha256: 'sha256', crc32: 'crc32' } as const;

/** The user metadata recording `digests`. */
export function metadataOf(digests: Digests): Record<string, string> {
  return {
    [META.md5]: digests.md5.toString('hex'),
    [META.crc32]: String(digests.crc32 >>> 0),
    ...(digests.sha256 ? { [META.sha256]: digests.sha256.toString('hex') } : {}),
  };
}

/** The checksums recorded in an object's user metadata; each one missing or malformed is left out. */
export function digestsFromMetadata(metadata: Record<string, string> | undefined): Partial<Digests> {
  const found: Partial<Digests> = {};
  const md5 = metadata?.[META.md5];
  if (md5 && /^[0-9a-f]{32}$/.test(md5)) found.md5 = Buffer.from(md5, 'hex');
  const sha256 = metadata?.[META.sha256];
  if (sha256 && /^[0-9a-f]{64}$/.test(sha256)) found.sha256 = Buffer.from(sha256, 'hex');
  const crc = metadata?.[META.crc32];
  if (crc && /^\d{1,10}$/.test(crc) && Number(crc) <= 0xffff_ffff) found.crc32 = Number(crc);
  return found;
}

/** The MD5 an ETag states, when it is a plain one (a single-part upload without KMS); undefined otherwise. */
export function md5FromEtag(etag: string | undefined): Buffer | undefined {
  const match = /^"?([0-9a-fA-F]{32})"?$/.exec(etag ?? '');
  return match ? Buffer.from(match[1] as string, 'hex') : undefined;
}

/**
 * Passes exactly `length` bytes through, computing their MD5, SHA-256 and CRC-32. More bytes, or an end before
 * `length`, fail the stream (so an upload is aborted rather than stored short) with `problem` set.
 */
export class DigestStream extends Transform {
  readonly #md5: Hash = createHash('md5');
  readonly #sha256: Hash = createHash('sha256');
  #crc = 0;
  #received = 0;
  /** Why the bytes were refused, if they were. */
  problem: PutRejected | undefined;

  constructor(readonly length: number) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#received += chunk.length;
    if (this.#received > this.length) {
      this.problem = new PutRejected(
        400,
        `The body is longer than its Content-Length of ${this.length} bytes.`,
      );
      done(this.problem);
      return;
    }
    this.#md5.update(chunk);
    this.#sha256.update(chunk);
    this.#crc = crc32(chunk, this.#crc);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.#received < this.length) {
      this.problem = new PutRejected(
        400,
        `The body ended after ${this.#received} of its ${this.length} bytes; nothing was stored.`,
      );
      done(this.problem);
      return;
    }
    done();
  }

  /** The checksums, once every byte passed. */
  digests(): Digests {
    return { md5: this.#md5.digest(), sha256: this.#sha256.digest(), crc32: this.#crc >>> 0 };
  }
}

/**
 * False when the object is stored encrypted with SSE-KMS, DSSE-KMS or SSE-C, whose ETag S3 documents is not the
 * MD5 of the data (a multipart ETag, `…-N`, is no MD5's form either).
 */
export function etagIsMd5(head: HeadObjectCommandOutput): boolean {
  const encryption = head.ServerSideEncryption;
  return encryption !== 'aws:kms' && encryption !== 'aws:kms:dsse' && head.SSECustomerAlgorithm === undefined;
}
