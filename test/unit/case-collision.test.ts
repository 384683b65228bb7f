/**
 * Two names of one batch that differ only in case are one file where the data root's file system folds case
 * (APFS's default, NTFS, exFAT): there the first is downloaded and the second refused, naming both and the file,
 * before anything of it is asked or touched; where case is told apart both are downloaded. The file system is
 * asked once per data root (a probe in its state folder); these tests give a fake answer where they need one.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import type * as CaseFolding from '../../src/data-root/case-folding.js';
import { planDownloads } from '../../src/download/batch/plan.js';
import { downloadFiles, previewDownloads } from '../../src/download/engine.js';
import type { DownloadHttp } from '../../src/download/types.js';
import { readableBody } from '../../src/http/body.js';

/** The answer the batch's probe gives, and how often it was asked. */
const folding = vi.hoisted(() => ({ answer: true, asked: 0 }));
vi.mock('../../src/data-root/case-folding.js', () => ({
  foldsCase: () => {
    folding.asked += 1;
    return folding.answer;
  },
}));

const UPPER = 'imap/spice/mk/IMAP_2025_005_a01.spice.mk';
const LOWER = 'imap/spice/mk/imap_2025_005_A01.SPICE.mk';
const OTHER = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_v001.cdf';

/** A service and store in memory, whole objects or ranges, each with its MD5 as ETag; every request noted. */
function fakeStore(objects: Record<string, string>) {
  const asked: string[] = [];
  const http: DownloadHttp = {
    async resolveDownload(path) {
      asked.push(`resolve ${path}`);
      return `http://objects.test/${path}`;
    },
    async getObject(url, options = {}) {
      const path = decodeURIComponent(new URL(url).pathname.slice(1));
      asked.push(`get ${path}`);
      const bytes = Buffer.from(objects[path] ?? '');
      const start = options.start ?? 0;
      const end = options.end ?? bytes.length - 1;
      const ranged = options.start !== undefined || options.end !== undefined;
      const body = bytes.subarray(start, end + 1);
      return {
        status: ranged ? 206 : 200,
        headers: {
          'content-length': String(body.length),
          ...(ranged ? { 'content-range': `bytes ${start}-${end}/${bytes.length}` } : {}),
          'accept-ranges': 'bytes',
          etag: `"${createHash('md5').update(bytes).digest('hex')}"`,
        },
        body: readableBody(Readable.from([body])),
      };
    },
  };
  return { http, asked };
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'case-collision-'));
  folding.answer = true;
  folding.asked = 0;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('planDownloads with names that differ only in case', () => {
  it('refuses the later name where the file system folds case, naming both and the one local file', () => {
    const probe = vi.fn(() => true);
    const planned = planDownloads([UPPER, OTHER, LOWER], root, probe);
    expect(probe).toHaveBeenCalledTimes(1);
    expect(planned.map((file) => [file.file.path, file.refused === undefined])).toEqual([
      [UPPER, true],
      [OTHER, true],
      [LOWER, false],
    ]);
    const message = planned[2]?.refused?.message ?? '';
    expect(message).toContain(`${LOWER} differs from ${UPPER} only in case`);
    expect(message).toContain(join(root, 'imap', 'spice', 'mk', 'IMAP_2025_005_a01.spice.mk'));
    expect(message).toContain('kept IMAP_2025_005_a01.spice.mk, not downloaded imap_2025_005_A01.SPICE.mk');
  });

  it('plans both where the file system tells case apart', () => {
    const probe = vi.fn(() => false);
    const planned = planDownloads([UPPER, LOWER], root, probe);
    expect(probe).toHaveBeenCalledTimes(1);
    expect(planned.map((file) => file.refused)).toEqual([undefined, undefined]);
    expect(planned.map((file) => file.localPath)).toEqual([join(root, UPPER), join(root, LOWER)]);
  });

  it('asks the file system nothing when no two names differ only in case', () => {
    const probe = vi.fn(() => true);
    expect(planDownloads([UPPER, OTHER, UPPER], root, probe)).toHaveLength(2);
    expect(probe).not.toHaveBeenCalled();
  });
});

describe('a batch on a data root that folds case', () => {
  it('downloads the first name, refuses the second without a request, and stays so over three runs', async () => {
    const { http, asked } = fakeStore({ [UPPER]: 'KPL/MK upper\n', [LOWER]: 'KPL/MK lower, longer\n' });
    const record = join(root, '.mission-data', 'verified.jsonl');
    const options = { dataDir: root, requests: requestSettings({ retryBaseMs: 1 }) };
    const local = join(root, UPPER);
    const seen: Array<{ record: string; inode: number; mtimeMs: number }> = [];
    for (let run = 1; run <= 3; run += 1) {
      asked.length = 0;
      const results = await downloadFiles(http, [UPPER, LOWER], options);
      expect(results.map((result) => result.status)).toEqual([
        run === 1 ? 'downloaded' : 'skipped',
        'failed',
      ]);
      expect(results[1]?.error?.message).toContain(`${LOWER} differs from ${UPPER} only in case`);
      expect(results[1]?.error?.message).toContain(local);
      // Nothing of the second name is asked for, in any run; the first's bytes only in the first run.
      expect(asked).toEqual(run === 1 ? [`resolve ${UPPER}`, `get ${UPPER}`] : []);
      expect(await readFile(local, 'utf8')).toBe('KPL/MK upper\n');
      const info = await stat(local);
      seen.push({ record: await readFile(record, 'utf8'), inode: info.ino, mtimeMs: info.mtimeMs });
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
    expect(seen[0]?.record).toContain(UPPER);
    expect(seen[0]?.record).not.toContain(LOWER);
    // No part of either name is left beside the file.
    expect(readdirSync(join(root, 'imap', 'spice', 'mk'))).toEqual(['IMAP_2025_005_a01.spice.mk']);
    expect(folding.asked).toBe(3);
  });

  it('downloads both where the file system tells case apart, as before', async () => {
    folding.answer = false;
    const { http } = fakeStore({ [UPPER]: 'upper\n', [LOWER]: 'lower\n' });
    const results = await downloadFiles(http, [UPPER, LOWER], {
      dataDir: root,
      requests: requestSettings({ retryBaseMs: 1 }),
    });
    expect(results.map((result) => result.status)).toEqual(['downloaded', 'downloaded']);
    expect(await readFile(join(root, UPPER), 'utf8')).toBe('upper\n');
    expect(await readFile(join(root, LOWER), 'utf8')).toBe('lower\n');
  });
});

describe('a dry run on a data root that folds case', () => {
  it('says the later name would be refused, and why', async () => {
    const previews = await previewDownloads([UPPER, LOWER], { dataDir: root });
    expect(previews.map((preview) => preview.action)).toEqual(['fetch', 'refuse']);
    expect(previews[1]?.error).toMatch(/differs from .* only in case/);
    folding.answer = false;
    const both = await previewDownloads([UPPER, LOWER], { dataDir: root });
    expect(both.map((preview) => preview.action)).toEqual(['fetch', 'fetch']);
  });
});

describe('the probe of a data root', () => {
  const actual = () => vi.importActual<typeof CaseFolding>('../../src/data-root/case-folding.js');

  it('answers what the file system does, leaves nothing behind, and is asked once per root', async () => {
    const { foldsCase } = await actual();
    // What this file system does, seen independently of the probe.
    writeFileSync(join(root, 'TWIN-A'), '');
    const folds = existsSync(join(root, 'twin-a'));
    const answer = foldsCase(root);
    expect(answer).toBe(folds);
    expect(readdirSync(join(root, '.mission-data'))).toEqual([]);
    // A second probe could not be made now (the state folder is a file): the answer is the first one's.
    await rm(join(root, '.mission-data'), { recursive: true });
    writeFileSync(join(root, '.mission-data'), '');
    expect(foldsCase(root)).toBe(answer);
  });

  it('answers that case folds where it cannot look, so the first file is never replaced', async () => {
    const { foldsCase } = await actual();
    mkdirSync(join(root, 'blocked'));
    writeFileSync(join(root, 'blocked', '.mission-data'), '');
    expect(foldsCase(join(root, 'blocked'))).toBe(true);
  });
});
