/**
 * `upload` through the built command line (issue 19): a file in a folder that disagrees with its name is refused
 * with the path it belongs at, `--ignore-folder` sends it by name; a name with reversed dates is refused; a file
 * the store holds with other bytes is reported as a refused upload with the next version to use; a refused key
 * is labelled by the upload, not by the request for its URL; an empty file is sent with a warning.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  cleanup,
  ON_BACKENDS,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const NAME = 'imap_mag_l1a_norm_20250410_20250410_v01-00.cdf';
const KEY = `imap/mag/l1a/2025/04/${NAME}`;
const SECRET = 'upload-checks-secret-0123456789';

let server: TestServer;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  server = await startServer({ storeDir: store });
});
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
});
beforeEach(async () => {
  home = await tempDir();
});
afterEach(async () => {
  await cleanup(home);
});

const cli = (args: string[]) => runCli([...args, '--url', server.url], { cwd: home, timeoutMs: 30_000 });

async function placeAt(path: string, contents: string): Promise<void> {
  await mkdir(join(home, 'data', path, '..'), { recursive: true });
  await writeFile(join(home, 'data', path), contents);
}

describe('upload and the folder a file lies in (point 8)', () => {
  it('refuses an l1a file below an l1b folder with the expected path; --ignore-folder sends it by name', async () => {
    const wrong = `imap/mag/l1b/2025/04/${NAME}`;
    await placeAt(wrong, 'april l1a');
    const refused = await cli(['upload', wrong]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `${join(home, 'data', wrong)} is in the wrong folder: the data level folder is "l1b" but the name's data level is l1a; expected ${join(home, 'data', KEY)}.`,
    );
    expect(refused.stderr).toMatch(
      /Hint: .*upload it by its name alone, wherever it lies: pass --ignore-folder\./,
    );
    expect(await server.objects()).toEqual([]);

    const dry = await cli(['upload', '--dry-run', wrong]);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/Error: .* is in the wrong folder/);
    expect((await cli(['upload', '--dry-run', '--ignore-folder', wrong])).code).toBe(0);

    const anyway = await cli(['upload', '--ignore-folder', wrong]);
    expect(anyway.code).toBe(0);
    expect(await server.objects()).toEqual([KEY]);
  });

  it('refuses a file below month 05 whose name starts in April', async () => {
    const wrong = `imap/mag/l1a/2025/05/${NAME}`;
    await placeAt(wrong, 'april');
    const refused = await cli(['upload', wrong]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `the month folder is "05" but the name's start date is in month 04; expected ${join(home, 'data', KEY)}.`,
    );
  });

  it('refuses a name whose end date is before its start date', async () => {
    const reversed = 'imap_mag_l1a_norm_20250410_20250401_v01-00.cdf';
    await placeAt(`imap/mag/l1a/2025/04/${reversed}`, 'reversed');
    const refused = await cli(['upload', reversed]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('end date 20250401 is before the start date 20250410');
  });
});

describe('a file the store holds with other bytes (point 12)', () => {
  it('is reported as a refused upload, not a GET, with the next version as the hint', async () => {
    const name = 'imap_mag_l1a_norm_20250411_20250411_v01-03.cdf';
    const key = `imap/mag/l1a/2025/04/${name}`;
    await placeAt(key, 'first bytes');
    expect((await cli(['upload', key])).code).toBe(0);
    await placeAt(key, 'other bytes, longer');
    const again = await cli(['upload', key]);
    expect(again.code).toBe(1);
    expect(again.stderr).not.toMatch(/\bGET\b/);
    expect(again.stderr).toContain(`failed ${key}: 409 already stored with other bytes`);
    expect(again.stderr).toContain(
      'Hint: The store never replaces a file: give the new product the next version, e.g. imap_mag_l1a_norm_20250411_20250411_v01-04.cdf, and upload that.',
    );
  });
});

describe.skipIf(ON_BACKENDS)('upload failures', () => {
  it('are labelled by the upload, not by the GET that asks for its URL', async () => {
    const closedStore = await tempDir('mission-store-');
    const closed = await startReferenceServer({
      store: closedStore,
      port: 0,
      secret: SECRET,
      apiKeys: ['right-key'],
    });
    try {
      await placeAt(KEY, 'april l1a');
      const result = await runCli(['upload', '--url', closed.url, `data/${KEY}`], { cwd: home });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`failed ${KEY}: 401 `);
      expect(result.stderr).not.toMatch(/GET \S+\/upload\//);
    } finally {
      await closed.close();
      await cleanup(closedStore);
    }
  });
});

describe.skipIf(ON_BACKENDS)('an empty file', () => {
  let own: string;
  let ownServer: ReferenceServer;
  beforeEach(async () => {
    own = await tempDir('mission-store-');
    ownServer = await startReferenceServer({ store: own, port: 0, secret: SECRET });
  });
  afterEach(async () => {
    await ownServer.close();
    await cleanup(own);
  });

  it.each([[[]], [['--no-checksum']]])('uploads a 0-byte science file with a warning (%j)', async (extra) => {
    const name = scienceName('mag', 6);
    const folder = join(home, 'data', 'imap/mag/l1a/2024/01');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, name), '');
    const run = await runCli(['upload', name, '--url', ownServer.url, '--data-dir', 'data', ...extra], {
      cwd: home,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `Warning: ${join(folder, name)} is empty (0 bytes); uploading it as it is.\n`,
    );
    expect(run.stderr).toContain('1 uploaded');
    // The same empty file again: already stored, with the same (no) bytes.
    const again = await runCli(['upload', name, '--url', ownServer.url, '--data-dir', 'data', ...extra], {
      cwd: home,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('1 already stored (same bytes)');
  });
});

describe('upload words of issue 36', () => {
  it('a dry run of a file in the wrong folder answers as the upload does: exit 2 and the --ignore-folder hint', async () => {
    const wrong = `imap/mag/l1b/2025/04/${NAME}`;
    await placeAt(wrong, 'april l1a');
    const dry = await cli(['upload', '--dry-run', wrong]);
    const real = await cli(['upload', wrong]);
    expect(dry.code).toBe(2);
    expect(dry.stderr).not.toMatch(/not found/);
    expect(dry.stderr).toContain('pass --ignore-folder');
    expect(dry.stderr).toBe(real.stderr);
  });

  it('a folder given to upload is said to be a folder', async () => {
    await placeAt(KEY, 'april');
    const folder = await runCli(['upload', 'data/imap/mag/l1a/2025/04', '--url', server.url], {
      cwd: home,
      timeoutMs: 30_000,
    });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('data/imap/mag/l1a/2025/04 is a folder: give the files in it');
    expect(folder.stderr).not.toMatch(/Invalid filename/);
  });

  it('a failure line names the file once', async () => {
    await placeAt(KEY, 'april');
    const refused = await runCli(['upload', KEY, '--url', 'http://127.0.0.1:9', '--retries', '0'], {
      cwd: home,
      timeoutMs: 30_000,
    });
    expect(refused.code).toBe(1);
    const line = refused.stderr.split('\n').find((text) => text.startsWith('failed ')) ?? '';
    expect(line).toMatch(/^failed imap\/mag\/l1a\/2025\/04\/imap_mag\S+: connection refused/);
    expect(line.split(NAME).length - 1).toBe(1);
  });
});
