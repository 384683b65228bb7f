import { closeSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BackgroundChecksum } from '../../src/core/checksums/background-checksum.js';
import { InlineChecksum, NoChecksum } from '../../src/core/checksums/checksum.js';
import { CombinedCrc32 } from '../../src/core/checksums/crc32-from-ranges.js';
import { checksumFor } from '../../src/download/object/object-checksum.js';

const GIB = 1024 ** 3;

describe('the checksum a download computes', () => {
  const readBack = () => {
    throw new Error('nothing is read back');
  };

  it('computes none for an object whose store states none (SSE-KMS, multipart): no MD5, no thread', async () => {
    const part = { descriptor: -1, readBack };
    for (const split of [false, true]) {
      const checksum = checksumFor(undefined, part, GIB, split);
      expect(checksum).toBeInstanceOf(NoChecksum);
      checksum.update(Buffer.alloc(16));
      checksum.flushed(16);
      checksum.catchUp(GIB);
      expect((await checksum.digest()).length).toBe(0);
      checksum.close();
    }
  });

  it('hashes a large object with a stated MD5 on a thread of its own, a small one in line', () => {
    const fd = openSync(import.meta.filename, 'r');
    try {
      const large = checksumFor('md5', { descriptor: fd, readBack }, GIB, true);
      expect(large).toBeInstanceOf(BackgroundChecksum);
      large.close();
      expect(checksumFor('md5', { descriptor: fd, readBack }, 1024, false)).toBeInstanceOf(InlineChecksum);
      // One stream of CRC-32 stays in line: zlib's CRC-32 costs less than a thread's reading back.
      expect(checksumFor('crc32', { descriptor: fd, readBack }, GIB, false)).toBeInstanceOf(InlineChecksum);
    } finally {
      closeSync(fd);
    }
  });

  it('joins the CRC-32s of parallel parts, taken as they arrive, and starts no thread for them', () => {
    const part = {
      get descriptor(): number {
        throw new Error('no thread reads the part back');
      },
      readBack,
    };
    for (const total of [1024, 8 * 1024 * 1024, GIB, 1024 * GIB]) {
      const checksum = checksumFor('crc32', part, total, true);
      expect(checksum).toBeInstanceOf(CombinedCrc32);
      expect(checksum.feedFrom).toBeTypeOf('function');
      checksum.close();
    }
    // The other algorithms of parallel parts are still read back, on the hashing thread for a large object.
    const fd = openSync(import.meta.filename, 'r');
    try {
      const md5 = checksumFor('md5', { descriptor: fd, readBack }, GIB, true);
      expect(md5).toBeInstanceOf(BackgroundChecksum);
      expect(md5.feedFrom).toBeUndefined();
      md5.close();
      const sha256 = checksumFor('sha256', { descriptor: fd, readBack }, 1024, true);
      expect(sha256).toBeInstanceOf(InlineChecksum);
      expect(sha256.feedFrom).toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });
});
