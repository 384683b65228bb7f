/**
 * The failures Windows gives, injected on Linux: a rename or removal refused (EPERM, EBUSY) while another program
 * holds the file open, and a folder that cannot be opened or synced; plus the link() that exFAT refuses. Each
 * writer of the data root, the configuration and the store goes on after the refusal passes, fails naming the
 * file when it does not, and a sync whose prune is refused goes on with the other files.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/api.js';
import { writeConfigFile } from '../../src/core/config-file.js';
import { ConfigError } from '../../src/core/errors.js';
import { HELD_RETRY_TOTAL_MS, heldFileOps } from '../../src/core/replace-file.js';
import { emptyState, readState, type SyncIdentity, writeState } from '../../src/data-root/sync-state.js';
import { PartFile } from '../../src/download/part/part-file.js';
import { startReferenceServer } from '../../src/server/index.js';
import { FolderStore } from '../../src/server/objects/folder-store.js';
import { commitOps } from '../../src/server/objects/folder-write.js';
import { PutRejected } from '../../src/server/objects/object-store.js';

// The part's commit renames synchronously first: its refusal is injected through node:fs itself.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, renameSync: vi.fn(actual.renameSync) };
});
const { renameSync } = await import('node:fs');
const fsRenameSync = vi.mocked(renameSync);

const refusal = (code: string) => Object.assign(new Error(`${code}: operation not permitted`), { code });
const refuseOnce = (code: string) =>
  fsRenameSync.mockImplementationOnce(() => {
    throw refusal(code);
  });

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'windows-failures-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  fsRenameSync.mockReset();
  vi.useRealTimers();
  await rm(home, { recursive: true, force: true });
});

/** A part of `destination` holding `text`, ready to commit. */
async function partHolding(destination: string, text: string): Promise<PartFile> {
  const part = await PartFile.claim(destination);
  part.write([Buffer.from(text)], text.length, 0);
  return part;
}

describe('a download whose destination another program holds open', () => {
  it('commits once the program lets go: the refused rename is tried again', async () => {
    const destination = join(home, 'file.cdf');
    await writeFile(destination, 'old');
    const part = await partHolding(destination, 'new bytes');
    refuseOnce('EPERM');
    const rename = vi.spyOn(heldFileOps, 'rename').mockRejectedValueOnce(refusal('EBUSY'));
    await part.commit();
    expect(rename).toHaveBeenCalledTimes(2);
    expect(await readFile(destination, 'utf8')).toBe('new bytes');
  });

  it('fails after the retries with an error naming the file and saying to close the program', async () => {
    vi.useFakeTimers();
    const destination = join(home, 'file.cdf');
    const part = await partHolding(destination, 'new bytes');
    refuseOnce('EPERM');
    vi.spyOn(heldFileOps, 'rename').mockRejectedValue(refusal('EPERM'));
    const outcome = part.commit().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(HELD_RETRY_TOTAL_MS);
    const error = (await outcome) as Error & { hint?: string };
    expect(error.message).toMatch(
      new RegExp(`^Cannot replace ${destination}: the system refused it \\(EPERM\\) .* may hold it open\\.$`),
    );
    expect(error.hint).toMatch(/^Close the program that has .*file\.cdf open, then run the command again\.$/);
  });

  it("writes the part's record once its old record is let go", async () => {
    const destination = join(home, 'file.cdf');
    const part = await partHolding(destination, 'some');
    refuseOnce('EBUSY');
    part.record({ etag: '"abc"', size: 10, written: 4 });
    const files = await import('node:fs/promises').then((fs) => fs.readdir(home));
    expect(files.filter((name) => name.endsWith('.json'))).toHaveLength(1);
    await part.discard();
  });
});

describe('the state and configuration files, held open while replaced', () => {
  const MAG: SyncIdentity = { url: 'http://api.test', filters: { instrument: 'mag' }, allVersions: false };

  it('a sync state is written once the refusal passes', async () => {
    const rename = vi
      .spyOn(heldFileOps, 'rename')
      .mockRejectedValueOnce(refusal('EPERM'))
      .mockRejectedValueOnce(refusal('EBUSY'));
    await writeState(home, MAG, { ...emptyState(MAG), cursor: '2025-01-01 00:00:00' });
    expect(rename).toHaveBeenCalledTimes(3);
    expect((await readState(home, MAG)).state.cursor).toBe('2025-01-01 00:00:00');
  });

  it('a configuration file that stays held fails as a ConfigError naming it, with what to do', async () => {
    vi.spyOn(heldFileOps, 'rename').mockRejectedValue(refusal('EBUSY'));
    const file = join(home, 'config.json');
    const started = Date.now();
    const error = (await writeConfigFile(file, { url: 'http://api.test' }).catch(
      (e: unknown) => e,
    )) as ConfigError;
    expect(Date.now() - started).toBeGreaterThanOrEqual(HELD_RETRY_TOTAL_MS);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`Cannot replace ${file}: the system refused it (EBUSY)`);
    expect(error.hint).toBe(`Close the program that has ${file} open, then run the command again.`);
  });
});

const KEY = (day: string) =>
  `imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_202501${day}_202501${day}_v01-00.cdf`;

/** Stores `text` at `key` as a PUT does. */
function put(store: FolderStore, key: string, text: string) {
  const body = Buffer.from(text);
  return store.put(key, Readable.from([body]), body.length);
}

describe('serve on a folder store', () => {
  it('skips the folder sync where the system refuses it (Windows), learning that once, and takes every upload', async () => {
    const store = await FolderStore.open(join(home, 'store'));
    const open = vi.spyOn(commitOps, 'open').mockRejectedValue(refusal('EPERM'));
    await put(store, KEY('01'), 'one');
    await put(store, KEY('02'), 'two');
    // One refused try, then none: decided once, not per upload.
    expect(open).toHaveBeenCalledTimes(1);
    expect(await readFile(join(store.root, ...KEY('02').split('/')), 'utf8')).toBe('two');
  });

  it('where link() is refused (exFAT), claims the key by an exclusive create: a second PUT of the key gets 409', async () => {
    const store = await FolderStore.open(join(home, 'store'));
    const link = vi.spyOn(commitOps, 'link').mockRejectedValue(refusal('EPERM'));
    await put(store, KEY('01'), 'first');
    const second = await put(store, KEY('01'), 'second').catch((error: unknown) => error);
    expect(second).toBeInstanceOf(PutRejected);
    expect(second).toMatchObject({ status: 409 });
    await put(store, KEY('02'), 'other');
    // Refused once, then not asked again.
    expect(link).toHaveBeenCalledTimes(1);
    expect(await readFile(join(store.root, ...KEY('01').split('/')), 'utf8')).toBe('first');
    expect(await readFile(join(store.root, ...KEY('02').split('/')), 'utf8')).toBe('other');
  });
});

describe('sync --prune of a file another program holds open', () => {
  it('reports that file, prunes the others and goes on; the run counts it failed', async () => {
    const storeDir = join(home, 'store');
    const older = (day: string) => KEY(day);
    const newer = (day: string) => KEY(day).replace('v01-00', 'v01-01');
    for (const key of [older('01'), newer('01'), older('02'), newer('02')]) {
      const path = join(storeDir, ...key.split('/'));
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, key);
    }
    const server = await startReferenceServer({ store: storeDir, secret: 'test-secret-0123456789abcdef' });
    const dataDir = join(home, 'data');
    const client = createClient({ url: server.url, dataDir, env: {}, configFile: join(home, 'none.json') });
    try {
      await client.download([older('01'), older('02')]);
      const held = join(dataDir, ...older('01').split('/'));
      const realRm = heldFileOps.rm;
      vi.spyOn(heldFileOps, 'rm').mockImplementation((path, options) =>
        path === held ? Promise.reject(refusal('EBUSY')) : realRm(path, options),
      );
      const notices: string[] = [];
      const result = await client.sync(
        { instrument: 'mag' },
        { prune: true, onNotice: (line) => notices.push(line) },
      );
      expect(result.fetched.sort()).toEqual([newer('01'), newer('02')]);
      expect(result.pruned).toEqual([older('02')]);
      expect(result.files.find((file) => file.path === older('01'))).toMatchObject({ status: 'failed' });
      expect(result.failed).toEqual([older('01')]);
      expect(notices).toEqual([
        expect.stringMatching(/^Cannot remove .*v01-00\.cdf: the system refused it \(EBUSY\).*later run\.$/),
      ]);
      expect((await stat(held)).isFile()).toBe(true);
      await expect(stat(join(dataDir, ...older('02').split('/')))).rejects.toMatchObject({ code: 'ENOENT' });
      // Once the program lets go, the next run removes it.
      vi.mocked(heldFileOps.rm).mockRestore();
      const again = await client.sync({ instrument: 'mag' }, { prune: true });
      expect(again.pruned).toEqual([older('01')]);
      expect(again.failed).toEqual([]);
    } finally {
      await client.close();
      await server.close();
    }
  }, 20_000);
});
