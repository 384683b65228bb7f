/**
 * What `verify` leans on below the command: the download record's lines for a pass (the time, a file found
 * damaged, kept across a reopen and a compaction) and the pool of hashing threads (every algorithm the record can
 * hold, a vanished file).
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChecksumAlgorithm, RunningChecksum } from '../../src/core/checksums/checksum.js';
import { FileHashError, FileHashPool } from '../../src/core/checksums/hash-pool.js';
import { checkAgainstRecord } from '../../src/coverage/changed.js';
import { VerifiedRecord } from '../../src/data-root/verified.js';

let root: string;
const content = Buffer.alloc(9 * 1024 * 1024 + 17);
for (let index = 0; index < content.length; index += 1) content[index] = (index * 31 + (index >> 9)) & 0xff;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mission-verify-unit-'));
  await writeFile(join(root, 'file.cdf'), content);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the download record, as verify writes it', () => {
  it('a pass line keeps its time; a line marked bad vouches for nothing, and status calls the file changed', async () => {
    const path = 'imap/mag/l1a/2024/01/x.cdf';
    const file = join(root, 'file.cdf');
    const stats = await stat(file);
    const record = await VerifiedRecord.open(root);
    record.add(path, stats, 'md5:00', true);
    expect(record.recorded(path)?.at).toBeGreaterThan(Date.now() - 60_000);
    expect(record.matches(path, stats)).toBe(true);
    const line = record.recorded(path);
    if (!line) throw new Error('no line');
    record.remember({ ...line, at: 1_000, bad: 'md5:ff' }, true);
    expect(record.matches(path, stats)).toBe(false);
    record.close();

    const reread = await VerifiedRecord.read(root);
    expect(reread.recorded(path)).toMatchObject({ at: 1_000, bad: 'md5:ff', sum: 'md5:00' });
    expect(reread.matches(path, stats)).toBe(false);
    expect(await checkAgainstRecord(reread, path, file)).toEqual({
      kind: 'changed',
      reason: 'verify found its bytes damaged',
    });
    const lines = (await readFile(join(root, '.mission-data/verified.jsonl'), 'utf8')).trim().split('\n');
    // Appended: the first line is still there after the second.
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0] as string)).not.toHaveProperty('bad');
  });

  it('a record of many files is read in chunks: lines across a chunk boundary whole, a line still being written left', async () => {
    const big = await mkdtemp(join(tmpdir(), 'mission-verify-big-'));
    try {
      await mkdir(join(big, '.mission-data'));
      const line = (index: number) =>
        `${JSON.stringify({ p: `imap/mag/l1a/2024/01/f${index}.cdf`, size: index, mtimeMs: 1, ino: 2, sum: 'md5:00', at: index })}\n`;
      const text = Array.from({ length: 30_000 }, (_, index) => line(index)).join('');
      expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
      const file = join(big, '.mission-data/verified.jsonl');
      await writeFile(file, `${text}{"p":"imap/mag/l1a/2024/01/half`);
      const record = await VerifiedRecord.read(big);
      expect([...record.entries()]).toHaveLength(30_000);
      expect(record.recorded('imap/mag/l1a/2024/01/f29999.cdf')).toMatchObject({ size: 29_999, at: 29_999 });
      await appendFile(file, `.cdf","size":7,"mtimeMs":1,"ino":2,"sum":"md5:00"}\n`);
      await record.refresh();
      expect(record.recorded('imap/mag/l1a/2024/01/half.cdf')?.size).toBe(7);
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });

  it('status compares a CRC-32C record instead of counting the file as not downloaded here', async () => {
    const path = 'imap/mag/l1a/2024/01/y.cdf';
    const file = join(root, 'file.cdf');
    const running = new RunningChecksum('crc32c');
    running.update(content);
    const hex = (await running.digest()).toString('hex');
    const record = await VerifiedRecord.open(root);
    const stats = await stat(file);
    record.remember({
      p: path,
      size: stats.size,
      mtimeMs: stats.mtimeMs - 1,
      ino: stats.ino,
      sum: `crc32c:${hex}`,
    });
    expect(await checkAgainstRecord(record, path, file)).toEqual({ kind: 'same' });
    record.remember({
      p: path,
      size: stats.size,
      mtimeMs: stats.mtimeMs - 1,
      ino: stats.ino,
      sum: 'crc32c:00000000',
    });
    expect((await checkAgainstRecord(record, path, file)).kind).toBe('changed');
    record.close();
  });
});

describe('the hashing threads', () => {
  const expected = async (algorithm: ChecksumAlgorithm) => {
    if (algorithm === 'crc32') {
      const digest = Buffer.alloc(4);
      digest.writeUInt32BE(crc32(content) >>> 0);
      return digest;
    }
    if (algorithm === 'crc32c' || algorithm === 'crc64nvme') {
      const running = new RunningChecksum(algorithm);
      running.update(content);
      return running.digest();
    }
    return createHash(algorithm).update(content).digest();
  };

  it.each(['md5', 'sha1', 'sha256', 'crc32', 'crc32c', 'crc64nvme'] as const)(
    'hashes a whole file in %s, each byte counted once, with the stats of what it read',
    async (algorithm) => {
      const pool = new FileHashPool(2);
      try {
        let counted = 0;
        const file = join(root, 'file.cdf');
        const hashed = await pool.hash(file, algorithm, (bytes) => {
          counted += bytes;
        });
        expect(hashed.digest.equals(await expected(algorithm))).toBe(true);
        expect(hashed.size).toBe(content.length);
        expect(counted).toBe(content.length);
        expect(hashed.ino).toBe((await stat(file)).ino);
      } finally {
        pool.close();
      }
    },
  );

  it('a file that is gone rejects with ENOENT, and the pool goes on with the next', async () => {
    const pool = new FileHashPool(1);
    try {
      const error = await pool.hash(join(root, 'gone.cdf'), 'md5').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FileHashError);
      expect((error as FileHashError).code).toBe('ENOENT');
      const next = await pool.hash(join(root, 'file.cdf'), 'md5');
      expect(next.digest.equals(await expected('md5'))).toBe(true);
    } finally {
      pool.close();
    }
  });

  it('an aborted signal rejects what waits and ends the threads', async () => {
    const controller = new AbortController();
    const pool = new FileHashPool(1, controller.signal);
    const first = pool.hash(join(root, 'file.cdf'), 'sha256');
    const second = pool.hash(join(root, 'file.cdf'), 'sha256');
    controller.abort();
    await expect(first).rejects.toMatchObject({ code: 'E_ABORTED' });
    await expect(second).rejects.toMatchObject({ code: 'E_ABORTED' });
  });
});
