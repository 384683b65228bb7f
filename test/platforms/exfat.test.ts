/**
 * exFAT, the file system of the USB disks shared between macOS, Windows and Linux: a fresh image mounted with
 * Debian's exfat-fuse on a loop device (root only) as the data root and as `serve --store`. exFAT refuses
 * link() and gives a file a new id when it is renamed; the commands must work there all the same.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePathOrName } from '../../src/naming/names.js';
import { type ReferenceServer, type RequestLogEntry, startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  listFiles,
  putFile,
  runCli,
  scienceName,
  tempDir,
} from '../helpers/e2e.js';

const BATCH = Array.from({ length: 100 }, (_, index) => scienceName('mag', index + 1));
const SYNCED = [1, 2, 3, 4, 5].map((day) => scienceName('swe', day));
const SIZE = 4096;
const pathOf = (name: string) => parsePathOrName(name).path;

/** The program's path, looked up where Debian installs system tools too (a non-login PATH may lack sbin). */
function tool(name: string): string | undefined {
  const folders = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  return folders
    .filter((folder) => folder !== '')
    .map((folder) => join(folder, name))
    .find((path) => existsSync(path));
}

/** Why exFAT cannot be mounted here, or undefined when it can. */
function whyNoMount(): string | undefined {
  if (process.platform !== 'linux') return 'loop devices and exfat-fuse are Linux tools';
  if (process.getuid?.() !== 0) return 'mounting a loop device needs root';
  for (const name of ['mkfs.exfat', 'mount.exfat-fuse', 'losetup'])
    if (!tool(name)) return `${name} is not installed (apt-get install exfatprogs exfat-fuse)`;
  if (!existsSync('/dev/loop-control')) return 'no loop devices (/dev/loop-control)';
  if (!existsSync('/dev/fuse')) return 'no FUSE (/dev/fuse)';
  return undefined;
}

const missing = whyNoMount();
const title = missing ? `exFAT as data root and store (skipped: ${missing})` : 'exFAT as data root and store';

/** Runs a system tool to its end; throws with its output when it fails. */
function sh(name: string, args: readonly string[]): string {
  const result = spawnSync(tool(name) ?? name, args, { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0)
    throw new Error(
      `${name} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.error ?? ''}`,
    );
  return result.stdout.trim();
}

/** Mounts the loop device's exFAT at `mount`. */
function mountExfat(): void {
  sh('mount.exfat-fuse', [loop, mount]);
  mounted = true;
}

/** Unmounts and mounts the disk again, as when a USB disk is plugged in again. */
function remount(): void {
  sh('umount', [mount]);
  mounted = false;
  mountExfat();
}

let scratch: string;
let mount: string;
let loop = '';
let mounted = false;
let store: string;
let home: string;
let server: ReferenceServer;
let requests: RequestLogEntry[] = [];

beforeAll(async () => {
  assertBuilt();
  if (missing) return;
  scratch = await tempDir('mission-exfat-');
  mount = join(scratch, 'mnt');
  await mkdir(mount);
  const image = join(scratch, 'exfat.img');
  sh('truncate', ['-s', '256M', image]);
  sh('mkfs.exfat', [image]);
  loop = sh('losetup', ['-f', '--show', image]);
  mountExfat();

  store = await tempDir('mission-store-');
  home = await tempDir();
  for (const name of [...BATCH, ...SYNCED]) await putFile(store, name, bytesFor(name, SIZE));
  server = await startReferenceServer({
    store,
    port: 0,
    secret: 'exfat-test-secret-0123456789',
    log: (entry) => requests.push(entry),
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  // Unmounted and detached whatever the tests did, so no loop device outlives the run.
  // A mount still busy (a process of a failed test holding a file) is detached lazily instead.
  if (mounted && spawnSync('umount', [mount], { timeout: 30_000 }).status !== 0)
    spawnSync('umount', ['-l', mount], { timeout: 30_000 });
  if (loop) spawnSync(tool('losetup') ?? 'losetup', ['-d', loop], { timeout: 30_000 });
  await cleanup(scratch);
  await cleanup(store);
  await cleanup(home);
}, 60_000);

const cli = (args: readonly string[]) =>
  runCli([...args, '--url', server.url, '--data-dir', join(mount, 'data')], {
    cwd: home,
    timeoutMs: 120_000,
  });
const objectGets = () =>
  requests.filter((entry) => entry.method === 'GET' && entry.route.startsWith('/objects'));

describe.skipIf(missing !== undefined)(title, { timeout: 180_000 }, () => {
  it('downloads a batch of 100 files into a data root on exFAT', async () => {
    const run = await cli(['download', '--instrument', 'mag']);
    expect(run.stderr).toContain('100 downloaded');
    expect(run.code).toBe(0);
    expect(await listFiles(join(mount, 'data'))).toEqual(BATCH.map(pathOf).sort());
    for (const name of BATCH)
      expect(await readFile(join(mount, 'data', pathOf(name)))).toEqual(bytesFor(name, SIZE));
  });

  it('skips the whole batch as verified on the next run, asking the store for none of its bytes', async () => {
    requests = [];
    const run = await cli(['download', '--instrument', 'mag']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('100 skipped (verified)');
    // Not even the one-byte ranged GET that reads an object's checksums: the record vouches for each file.
    expect(objectGets()).toEqual([]);
  });

  it('still skips the batch as verified once the disk is mounted again (exFAT numbers its files anew)', async () => {
    remount();
    requests = [];
    const run = await cli(['download', '--instrument', 'mag']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('100 skipped (verified)');
    // Not even the one-byte ranged GET that reads an object's checksums: the record vouches for each file.
    expect(objectGets()).toEqual([]);
  });

  it('verifies the batch clean', async () => {
    const run = await cli(['verify', '--instrument', 'mag']);
    expect(run.stderr).toMatch(/100 ok, 0 corrupt/);
    expect(run.code).toBe(0);
  });

  it('syncs into the data root on exFAT, then finds nothing new', async () => {
    const first = await cli(['sync', '--instrument', 'swe']);
    expect(first.stderr).toContain('Sync: 5 fetched; first run.');
    expect(first.code).toBe(0);
    for (const name of SYNCED)
      expect(await readFile(join(mount, 'data', pathOf(name)))).toEqual(bytesFor(name, SIZE));
    const second = await cli(['sync', '--instrument', 'swe']);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('Sync: nothing new');
    expect(second.code).toBe(0);
  });

  it('uploads a file from the data root on exFAT', async () => {
    const name = scienceName('hit', 1);
    await putFile(join(mount, 'data'), name, bytesFor(name, SIZE));
    const run = await cli(['upload', pathOf(name)]);
    expect(run.stderr).toContain('1 uploaded');
    expect(run.code).toBe(0);
    expect(await readFile(join(store, pathOf(name)))).toEqual(bytesFor(name, SIZE));
  });

  it('serves a store on exFAT, taking 20 uploads and serving them back', async () => {
    const names = Array.from({ length: 20 }, (_, index) => scienceName('swe', index + 1, 'l1b'));
    const exfatStore = join(mount, 'store');
    const onExfat = await startReferenceServer({
      store: exfatStore,
      port: 0,
      secret: 'exfat-store-secret-0123456789',
    });
    const producer = await tempDir();
    const consumer = await tempDir();
    try {
      for (const name of names) await putFile(join(producer, 'data'), name, bytesFor(name, SIZE));
      const upload = await runCli(['upload', '--url', onExfat.url, ...names.map(pathOf)], { cwd: producer });
      expect(upload.stderr).toContain('20 uploaded');
      expect(upload.code).toBe(0);
      for (const name of names)
        expect(await readFile(join(exfatStore, pathOf(name)))).toEqual(bytesFor(name, SIZE));
      const download = await runCli(['download', '--url', onExfat.url, ...names], { cwd: consumer });
      expect(download.stderr).toContain('20 downloaded');
      expect(download.code).toBe(0);
    } finally {
      await onExfat.close();
      await cleanup(producer);
      await cleanup(consumer);
    }
  });
});
