/**
 * What a batch asks of the file system per file: a constant, whatever the number of files of a folder. The data
 * root's and each folder's real path are resolved once per batch (not per file: a real path costs one `readlink`
 * per step from `/`), a file's turn looks at the file system a fixed number of times, and the folder checked once
 * is still held to what was checked before each write in it: one swapped for a symbolic link since is refused
 * before a part is made there, and a record is never written through it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { NO_FOLLOW } from '../../src/core/no-follow.js';
import { realPathOps } from '../../src/core/real-path.js';
import { FolderCache } from '../../src/download/batch/plan.js';
import { downloadFiles } from '../../src/download/engine.js';
import { PartFile } from '../../src/download/part/part-file.js';
import type { DownloadHttp } from '../../src/download/types.js';
import { readableBody } from '../../src/http/body.js';
import { unixOnly } from '../helpers/platform.js';

const LINKS = unixOnly('symlinks');

/** The calls of `node:fs` the code under test made while `counting`, by name; and every path opened. */
const seen = vi.hoisted(() => ({
  counting: false,
  calls: new Map<string, number>(),
  opened: [] as string[],
}));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const counted =
    <Args extends unknown[], Result>(name: string, call: (...args: Args) => Result) =>
    (...args: Args): Result => {
      if (seen.counting) seen.calls.set(name, (seen.calls.get(name) ?? 0) + 1);
      return call(...args);
    };
  const wrapped = {
    lstatSync: counted('lstatSync', fs.lstatSync),
    statSync: counted('statSync', fs.statSync),
    fstatSync: counted('fstatSync', fs.fstatSync),
    openSync: (path: import('node:fs').PathLike, ...rest: [never, never?]) => {
      seen.opened.push(String(path));
      return fs.openSync(path, ...rest);
    },
  };
  return { ...fs, ...wrapped, default: { ...fs, ...wrapped } };
});

const REQUESTS = requestSettings({ retries: 0, retryBaseMs: 1 });
const FOLDER = 'imap/mag/l1a/2024/01';

/** `count` files of one month folder, distinct bytes each. */
function monthOfFiles(count: number): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (let day = 1; day <= count; day += 1) {
    const date = `202401${String(day).padStart(2, '0')}`;
    files.set(`${FOLDER}/imap_mag_l1a_norm_${date}_${date}_v01-00.cdf`, Buffer.alloc(500 + day, day));
  }
  return files;
}

/** A store in memory: each object whole, with its MD5 as the ETag (so each file is verified and recorded). */
function memoryStore(objects: Map<string, Buffer>): DownloadHttp {
  return {
    resolveDownload: async (path) => `http://store.invalid/objects/${path}`,
    getObject: async (url) => {
      const body = objects.get(decodeURIComponent(new URL(url).pathname.slice('/objects/'.length)));
      if (!body) throw new Error(`no object at ${url}`);
      const etag = `"${createHash('md5').update(body).digest('hex')}"`;
      return {
        status: 200,
        headers: { 'content-length': String(body.length), etag },
        body: readableBody(Readable.from([body])),
      };
    },
  };
}

let root: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'batch-syscalls-'));
  outside = await mkdtemp(join(tmpdir(), 'batch-syscalls-outside-'));
  seen.calls.clear();
  seen.opened.length = 0;
});
afterEach(async () => {
  seen.counting = false;
  vi.restoreAllMocks();
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

/** Every real path resolved (by any of the resolvers) while `batch` runs. */
async function realPathsDuring(batch: () => Promise<unknown>): Promise<number> {
  const spies = (['native', 'nativeSync', 'walking', 'walkingSync'] as const).map((name) =>
    vi.spyOn(realPathOps, name),
  );
  await batch();
  const total = spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
  for (const spy of spies) spy.mockRestore();
  return total;
}

/** The looks at the file system's metadata (`lstat`, `stat`, `fstat`, synchronous) while `batch` runs. */
async function statsDuring(batch: () => Promise<unknown>): Promise<number> {
  seen.calls.clear();
  seen.counting = true;
  try {
    await batch();
  } finally {
    seen.counting = false;
  }
  return [...seen.calls.values()].reduce((sum, count) => sum + count, 0);
}

/** One batch of `files` into a data root of its own; every file must be downloaded. */
async function batchOf(files: Map<string, Buffer>, dataDir: string): Promise<void> {
  const results = await downloadFiles(memoryStore(files), [...files.keys()], { requests: REQUESTS, dataDir });
  expect(results.map((result) => result.status)).toEqual([...files.keys()].map(() => 'downloaded'));
}

describe('a batch of many files in one folder', () => {
  it('resolves real paths a fixed number of times, however many files the folder takes', async () => {
    const few = await realPathsDuring(() => batchOf(monthOfFiles(3), join(root, 'few')));
    const many = await realPathsDuring(() => batchOf(monthOfFiles(24), join(root, 'many')));
    // The data root's once when it is opened, and once for the batch's folders: never one per file.
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(3);
  });

  it('looks at the file system four times per file: the destination, the runs, the folder, the part', async () => {
    await batchOf(monthOfFiles(2), join(root, 'warm-up'));
    const few = await statsDuring(() => batchOf(monthOfFiles(4), join(root, 'few')));
    const many = await statsDuring(() => batchOf(monthOfFiles(24), join(root, 'many')));
    // Where the system has no O_NOFOLLOW (Windows), a part's name is looked at before it is made.
    expect((many - few) / 20).toBeLessThanOrEqual(NO_FOLLOW === 0 ? 5 : 4);
  });
});

describe.skipIf(LINKS.missing)(LINKS.title('a folder changed after the batch checked it'), () => {
  const files = monthOfFiles(2);
  const [first, second] = [...files.keys()] as [string, string];

  /** The batch of both files, one at a time, with `change` done to their folder once the first is in place. */
  async function changedBetween(change: (folder: string) => void) {
    const folder = join(root, FOLDER);
    return downloadFiles(memoryStore(files), [first, second], {
      requests: REQUESTS,
      dataDir: root,
      concurrency: 1,
      onProgress: (event) => {
        if (event.done && event.path === first) change(folder);
      },
    });
  }

  it('is refused before a part is made there when it became a symbolic link leading outside the data root', async () => {
    const results = await changedBetween((folder) => {
      rmSync(folder, { recursive: true });
      symlinkSync(outside, folder);
    });
    expect(results[0]?.status).toBe('downloaded');
    expect(results[1]).toMatchObject({ status: 'failed', error: { code: 'E_UNSAFE_PATH' } });
    expect(results[1]?.error?.message).toContain('outside the data root');
    // Nothing was opened in the folder for the second file, not even its part for a moment.
    expect(seen.opened.filter((path) => path.startsWith(join(root, second)))).toEqual([]);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('is written in when it was made anew inside the data root, or became a link inside it', async () => {
    const anew = await changedBetween((folder) => {
      rmSync(folder, { recursive: true });
      mkdirSync(folder);
    });
    expect(anew.map((result) => result.status)).toEqual(['downloaded', 'downloaded']);
    expect(await readFile(join(root, second))).toEqual(files.get(second));

    await rm(root, { recursive: true, force: true });
    mkdirSync(root);
    const linked = await changedBetween((folder) => {
      const elsewhere = join(root, 'elsewhere');
      mkdirSync(elsewhere);
      rmSync(folder, { recursive: true });
      symlinkSync(elsewhere, folder);
    });
    expect(linked.map((result) => result.status)).toEqual(['downloaded', 'downloaded']);
    expect(await readFile(join(root, 'elsewhere', second.split('/').pop() as string))).toEqual(
      files.get(second),
    );
  });

  it("never writes a part's record through it once it became a symbolic link", async () => {
    const destination = join(root, first);
    const folder = new FolderCache(root).ensure(dirname(destination));
    const part = await PartFile.claim(destination, { folderNames: folder.partNames, folder });
    rmSync(dirname(destination), { recursive: true });
    symlinkSync(outside, dirname(destination));
    expect(() => part.record({ etag: '"x"', size: 10, written: 5 })).toThrow(
      expect.objectContaining({ code: 'E_UNSAFE_PATH' }),
    );
    expect(readdirSync(outside)).toEqual([]);
    await part.discard();
  });
});
