/**
 * The hashing threads as `verify` drives them: a file measured before it is read (`hashIfSize`), small files handed
 * out and answered in batches, and a pass over a root whose files are measured on the threads or before the pass.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { FileHashError, FileHashPool } from '../../src/core/checksums/hash-pool.js';
import { VerifiedRecord } from '../../src/data-root/verified.js';
import type { VerifyEntry, VerifyHttp } from '../../src/sync/verify-entries.js';
import { VerifyPass } from '../../src/sync/verify-pass.js';

let root: string;
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest();
const contentOf = (index: number) => Buffer.from(`file ${index} `.repeat(index + 1));

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mission-hash-pool-'));
  for (let index = 0; index < 200; index += 1) await writeFile(join(root, `f${index}`), contentOf(index));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a file measured before it is read', () => {
  it.each(['md5', 'crc32c'] as const)(
    '%s: hashed at the size expected; another size answered without a read; a file gone is a measuring failure',
    async (algorithm) => {
      const pool = new FileHashPool(1);
      try {
        const file = join(root, 'f7');
        const size = contentOf(7).length;
        let counted = 0;
        const whole = await pool.hashIfSize(file, algorithm, size, (bytes) => {
          counted += bytes;
        });
        expect(whole).toMatchObject({ size, ino: (await stat(file)).ino });
        expect(counted).toBe(size);
        counted = 0;
        expect(await pool.hashIfSize(file, algorithm, size + 1, () => (counted += 1))).toEqual({
          sizeDiffers: true,
          size,
        });
        expect(counted).toBe(0);
        const error = await pool
          .hashIfSize(join(root, 'gone'), algorithm, 3)
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(FileHashError);
        expect(error).toMatchObject({ code: 'ENOENT', measuring: true });
        const unmeasured = await pool.hash(join(root, 'gone'), algorithm).catch((caught: unknown) => caught);
        expect(unmeasured).toMatchObject({ code: 'ENOENT', measuring: false });
      } finally {
        pool.close();
      }
    },
  );

  it('200 small files asked at once, and one gone among them: each answer is its own file', async () => {
    const pool = new FileHashPool(2);
    try {
      const asked = Array.from({ length: 200 }, (_, index) =>
        pool.hashSized(join(root, `f${index}`), 'md5', contentOf(index).length),
      );
      const gone = pool.hashSized(join(root, 'gone'), 'md5', 10).catch((caught: unknown) => caught);
      const hashed = await Promise.all(asked);
      hashed.forEach((found, index) => {
        expect(found.digest.equals(md5(contentOf(index)))).toBe(true);
        expect(found.size).toBe(contentOf(index).length);
      });
      expect(await gone).toMatchObject({ code: 'ENOENT' });
    } finally {
      pool.close();
    }
  });
});

describe('a pass over files the record vouches for', () => {
  let data: string;
  const names = ['same', 'grown', 'damaged', 'gone'].map((name) => `imap/mag/l1a/2024/01/${name}.cdf`);

  /** The root as verified, then changed: one file grown, one damaged in place, one deleted. */
  async function prepare(): Promise<void> {
    data = await mkdtemp(join(tmpdir(), 'mission-hash-pool-pass-'));
    await mkdir(join(data, 'imap/mag/l1a/2024/01'), { recursive: true });
    const record = await VerifiedRecord.open(data);
    for (const [index, name] of names.entries()) {
      const bytes = contentOf(index + 3);
      await writeFile(join(data, name), bytes);
      record.add(name, await stat(join(data, name)), `md5:${md5(bytes).toString('hex')}`, true);
    }
    record.close();
    await writeFile(join(data, names[1] as string), Buffer.concat([contentOf(4), Buffer.from('+')]));
    const damaged = contentOf(5);
    damaged[0] = damaged[0] === 0x41 ? 0x42 : 0x41;
    await writeFile(join(data, names[2] as string), damaged);
    await rm(join(data, names[3] as string));
  }

  it.each([
    ['on the threads', false],
    ['before the pass, for its progress', true],
  ])('measured %s: ok, corrupt by size, corrupt by digest, vanished', async (_, withProgress) => {
    await prepare();
    const pool = new FileHashPool(2);
    const record = await VerifiedRecord.open(data);
    try {
      const pass = new VerifyPass(
        {} as VerifyHttp,
        record,
        {
          dataDir: data,
          requests: requestSettings({}),
          onProgress: withProgress ? () => undefined : undefined,
        },
        pool,
      );
      await pass.run(names, (path) => join(data, path));
      const report = pass.report(names.length);
      const byName = new Map(report.entries.map((entry: VerifyEntry) => [entry.path, entry]));
      expect(byName.get(names[0] as string)).toMatchObject({ status: 'ok', against: 'record' });
      const grownSize = contentOf(4).length;
      expect(byName.get(names[1] as string)).toMatchObject({
        status: 'corrupt',
        expected: `${grownSize} bytes`,
        got: `${grownSize + 1} bytes`,
        reason: `${grownSize + 1} bytes, ${grownSize} when verified`,
      });
      expect(byName.get(names[2] as string)).toMatchObject({
        status: 'corrupt',
        algorithm: 'md5',
        expected: md5(contentOf(5)).toString('hex'),
      });
      expect(byName.get(names[3] as string)).toMatchObject({
        status: 'unreadable',
        reason: 'vanished during the pass',
      });
      expect(report.bytes).toBe(contentOf(3).length + grownSize + 1 + contentOf(5).length);
      expect(record.recorded(names[1] as string)?.bad).toBe(`size:${grownSize + 1}`);
    } finally {
      record.close();
      pool.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});

describe('a pass over files the record does not vouch for', () => {
  it('asks the archive about 8 files at most at once, however many the threads hold', async () => {
    const data = await mkdtemp(join(tmpdir(), 'mission-hash-pool-archive-'));
    const pool = new FileHashPool(2);
    const record = await VerifiedRecord.open(data);
    try {
      const paths = Array.from({ length: 40 }, (_, index) => `imap/mag/l1a/2024/01/f${index}.cdf`);
      await mkdir(join(data, 'imap/mag/l1a/2024/01'), { recursive: true });
      for (const path of paths) await writeFile(join(data, path), 'bytes');
      let asking = 0;
      let most = 0;
      const http = {
        async resolveDownload(path: string) {
          asking += 1;
          most = Math.max(most, asking);
          await new Promise((resolve) => setTimeout(resolve, 5));
          return `http://archive.invalid/${path}`;
        },
        async getObject() {
          asking -= 1;
          return { status: 206, headers: { 'content-range': 'bytes 0-0/5' }, body: { destroy() {} } };
        },
      };
      const pass = new VerifyPass(
        http as unknown as VerifyHttp,
        record,
        { dataDir: data, requests: requestSettings({}) },
        pool,
      );
      await pass.run(paths, (path) => join(data, path));
      const report = pass.report(paths.length);
      expect(report.counts.unverifiable).toBe(paths.length);
      expect(most).toBe(8);
    } finally {
      record.close();
      pool.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});
