/**
 * What an object store says about an object's bytes, and the running hash that checks them as they stream.
 * S3 and its kin say it in `Content-MD5`, in `x-amz-checksum-*` headers, or in an ETag that is the plain MD5 of
 * the object (its single-part form; a multipart ETag `…-N` is not an MD5 and is never taken for one).
 */
import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** An algorithm a store states a checksum in. */
export type ChecksumAlgorithm = 'md5' | 'sha256' | 'sha1' | 'crc32';

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

/** The object's MD5 when its ETag is one (32 hex digits, quoted or weak-free); undefined otherwise. */
export function md5FromEtag(etag: string | undefined): Buffer | undefined {
  const match = etag === undefined ? null : /^"?([0-9a-fA-F]{32})"?$/.exec(etag.trim());
  return match ? Buffer.from(match[1] as string, 'hex') : undefined;
}

/**
 * The checksum of the whole object an answer states. `whole` says the answer carries the whole object (200):
 * `Content-MD5` and `x-amz-checksum-*` describe the body, so a 206 only lends its ETag.
 */
export function expectedChecksum(headers: Headers, whole: boolean): ExpectedChecksum | undefined {
  if (whole) {
    const md5 = base64Digest(headerValue(headers, 'content-md5'), 16);
    if (md5) return { algorithm: 'md5', digest: md5, source: 'Content-MD5' };
    const candidates: Array<[ChecksumAlgorithm, string, number]> = [
      ['sha256', 'x-amz-checksum-sha256', 32],
      ['sha1', 'x-amz-checksum-sha1', 20],
      ['crc32', 'x-amz-checksum-crc32', 4],
    ];
    for (const [algorithm, name, bytes] of candidates) {
      // A composite checksum of a multipart object ends in `-N`: not a checksum of the bytes, skipped.
      const digest = base64Digest(headerValue(headers, name), bytes);
      if (digest) return { algorithm, digest, source: name };
    }
  }
  const fromEtag = md5FromEtag(headerValue(headers, 'etag'));
  return fromEtag ? { algorithm: 'md5', digest: fromEtag, source: 'ETag' } : undefined;
}

/** A running hash of one algorithm, fed in byte order. */
export class RunningChecksum {
  readonly #hash: Hash | undefined;
  #crc = 0;

  constructor(readonly algorithm: ChecksumAlgorithm) {
    this.#hash = algorithm === 'crc32' ? undefined : createHash(algorithm);
  }

  update(chunk: Buffer): void {
    if (this.#hash) this.#hash.update(chunk);
    else this.#crc = crc32(chunk, this.#crc);
  }

  digest(): Buffer {
    if (this.#hash) return this.#hash.digest();
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.#crc >>> 0);
    return out;
  }
}

/** A digest as messages show it: hex for MD5 (as ETags show it), base64 for the others (as their headers do). */
export function showDigest(algorithm: ChecksumAlgorithm, digest: Buffer): string {
  return algorithm === 'md5' ? digest.toString('hex') : digest.toString('base64');
}
