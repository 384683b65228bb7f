/**
 * Checksums of stored objects, as S3 gives them (`ETag: "<hex md5>"`, `Content-MD5: <base64 md5>`,
 * `x-amz-checksum-crc32: <base64 of the 4 big-endian bytes>`), and the sidecar files that keep them across
 * restarts. Where sidecars live, and that the way to them is safe, is the
 * object store's business; this module reads, writes and checks them.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, unlink, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { openNoFollow } from '../../core/no-follow.js';
import { replaceFile } from '../../core/replace-file.js';

/** The dot-folder of the store holding one sidecar per object, at the object's key (`scan()` skips dot-entries). */
export const CHECKSUM_FOLDER = '.checksums';

/** The checksums of an object's bytes. */
export interface Digests {
  /** The raw 16-byte MD5 digest. */
  md5: Buffer;
  /** The CRC-32 (zlib's, S3's `CRC32`) as an unsigned integer. */
  crc32: number;
  /** The raw 32-byte SHA-256 digest, where the store keeps one. */
  sha256?: Buffer | undefined;
}

/** The checksums known of an object, where not all of them are. */
export type KnownDigests = { md5?: Buffer | undefined; sha256?: Buffer | undefined };

/** What a sidecar records: the digests, and the size and mtime of the file they were computed from. */
export interface ChecksumRecord extends Digests {
  size: number;
  mtimeMs: number;
}

/** A sidecar is a line of JSON of well under this; anything bigger is not one of ours and is not read. */
const MAX_SIDECAR_BYTES = 1024;

/** Read size when hashing a stored object. */
const HASH_CHUNK_BYTES = 1024 * 1024;

/** The strong validator of an object: its MD5 in lower-case hex, quoted (S3's form for single-part objects). */
export function etagOf(md5: Buffer): string {
  return `"${md5.toString('hex')}"`;
}

/** The `Content-MD5` header value of a digest (RFC 1864: base64 of the 16 raw bytes). */
export function contentMd5Of(md5: Buffer): string {
  return md5.toString('base64');
}

/** The `x-amz-checksum-crc32` header value of a CRC-32: base64 of its 4 bytes, most significant first. */
export function crc32HeaderOf(crc: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc >>> 0);
  return bytes.toString('base64');
}

/**
 * A download URL with a checksum of its object in its fragment (`#md5=<hex>`, else `#sha256=<hex>`: the form
 * package indexes give download URLs, PEP 503), which the client checks the bytes against (`http/stated-digest.ts`
 * reads it). MD5 first: it catches damage on the way or on disk as well as SHA-256 does, it is what the store's own
 * ETag and Content-MD5 state, and the client's order of checksums (`core/checksums/checksum.ts`) ranks it first.
 * HTTP never sends a fragment, so any client can use the URL as it is. The URL unchanged when no checksum is known,
 * or it has a fragment already.
 */
export function withDigestFragment(url: string, digests: KnownDigests): string {
  if (url.includes('#')) return url;
  if (digests.md5) return `${url}#md5=${digests.md5.toString('hex')}`;
  return digests.sha256 ? `${url}#sha256=${digests.sha256.toString('hex')}` : url;
}

/** The text of a sidecar. */
export function formatSidecar(record: ChecksumRecord): string {
  const { crc32: crc, size, mtimeMs } = record;
  return `${JSON.stringify({ md5: record.md5.toString('hex'), crc32: crc >>> 0, size, mtimeMs })}\n`;
}

/**
 * The digests a sidecar holds, when the sidecar is well-formed and was written for a file of exactly this size
 * and mtime; undefined otherwise (the object was replaced by hand since, the sidecar is damaged or foreign, or
 * it predates the CRC-32 and the digests are computed again).
 */
export function parseSidecar(text: string, size: number, mtimeMs: number): Digests | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.md5 !== 'string' || !/^[0-9a-f]{32}$/.test(record.md5)) return undefined;
  const crc = record.crc32;
  if (typeof crc !== 'number' || !Number.isInteger(crc) || crc < 0 || crc > 0xffff_ffff) return undefined;
  if (record.size !== size || record.mtimeMs !== mtimeMs) return undefined;
  return { md5: Buffer.from(record.md5, 'hex'), crc32: crc };
}

/**
 * Reads the sidecar at `path` for a file of `size` bytes and mtime `mtimeMs`; undefined when there is none
 * or it does not fit. A symlink is never followed: one placed in the store must not make the server read
 * (or vouch for) a file outside it.
 */
export async function readSidecar(path: string, size: number, mtimeMs: number): Promise<Digests | undefined> {
  let handle: FileHandle;
  try {
    handle = await openNoFollow(path, constants.O_RDONLY);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_SIDECAR_BYTES) return undefined;
    const buffer = Buffer.alloc(stats.size);
    const { bytesRead } = await handle.read(buffer, 0, stats.size, 0);
    return parseSidecar(buffer.toString('utf8', 0, bytesRead), size, mtimeMs);
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Writes a sidecar atomically: the whole text goes to `temp` (created exclusively, so never through a link),
 * which is then renamed over `path`. A rename replaces a symlink at `path` instead of following it, and a
 * reader sees the old sidecar or the new one, never half of one; a sidecar a reader holds open (Windows) is
 * replaced once it lets go (`replaceFile`).
 */
export async function writeSidecar(temp: string, path: string, record: ChecksumRecord): Promise<void> {
  try {
    await writeFile(temp, formatSidecar(record), { encoding: 'utf8', flag: 'wx', mode: 0o644 });
    await replaceFile(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** The digests of the first `size` bytes of an open file, read by position (the handle's own offset is left alone). */
export async function digestsOfFile(handle: FileHandle, size: number): Promise<Digests> {
  const hash = createHash('md5');
  let crc = 0;
  const buffer = Buffer.allocUnsafe(Math.min(HASH_CHUNK_BYTES, Math.max(size, 1)));
  let position = 0;
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    crc = crc32(chunk, crc);
    position += bytesRead;
  }
  if (position !== size) {
    throw new Error(
      `The object changed while its checksums were computed: read ${position} of ${size} bytes.`,
    );
  }
  return { md5: hash.digest(), crc32: crc };
}
