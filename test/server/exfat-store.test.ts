/**
 * exFAT, for real: a fresh image mounted with exfat-fuse on a loop device (root only; skipped with the reason
 * elsewhere). exFAT refuses link() (EPERM), so the folder store commits by an exclusive create there: the
 * reference server, in this process, takes 20 uploads into a store on it. And exfat-fuse numbers files anew
 * at each mount, so the verified record must not count on inode numbers there: a 100-file batch downloaded
 * to a data root on it and run again after a remount asks the store for no object.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { parsePathOrName } from '../../src/naming/names.js';
import { type ReferenceServer, type RequestLogEntry, startReferenceServer } from '../../src/server/index.js';

const SECRET = 'exfat-store-secret-0123456789';
const name = (instrument: string, day: number) => {
  const stamp = new Date(Date.UTC(2024, 0, day)).toISOString().slice(0, 10).replaceAll('-', '');
  return `imap_${instrument}_l1a_test_${stamp}_${stamp}_v01-00.cdf`;
};
const keyOf = (file: string) => parsePathOrName(file).path;
const bytesOf = (file: string) => Buffer.from(`${file}\n`.repeat(64));

/** A system tool's path, looked up in sbin too (a non-login PATH may lack it). */
function tool(program: string): string | undefined {
  const folders = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  return folders
    .filter((folder) => folder !== '')
    .map((folder) => join(folder, program))
    .find((path) => existsSync(path));
}

/** Why exFAT cannot be mounted here; undefined when it can. */
function whyNoMount(): string | undefined {
  if (process.platform !== 'linux') return 'loop devices and exfat-fuse are Linux tools';
  if (process.getuid?.() !== 0) return 'mounting a loop device needs root';
  for (const program of ['mkfs.exfat', 'mount.exfat-fuse', 'losetup', 'umount'])
    if (!tool(program)) return `${program} is not installed (apt-get install exfatprogs exfat-fuse)`;
  if (!existsSync('/dev/loop-control') || !existsSync('/dev/fuse')) return 'no loop devices or no FUSE';
  return undefined;
}

/** Runs a system tool; throws with its output when it fails. */
function sh(program: string, args: readonly string[]): string {
  const result = spawnSync(tool(program) ?? program, args, { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

const missing = whyNoMount();
let scratch: string;
let mount: string;
let loop = '';
let mounted = false;

function mountExfat(): void {
  sh('mount.exfat-fuse', [loop, mount]);
  mounted = true;
}

beforeAll(() => {
  if (missing) return;
  return (async () => {
    scratch = await mkdtemp(join(tmpdir(), 'exfat-store-'));
    mount = join(scratch, 'mnt');
    await mkdir(mount);
    const image = join(scratch, 'exfat.img');
    sh('truncate', ['-s', '256M', image]);
    sh('mkfs.exfat', [image]);
    loop = sh('losetup', ['-f', '--show', image]);
    mountExfat();
  })();
}, 60_000);

afterAll(async () => {
  if (mounted) spawnSync(tool('umount') ?? 'umount', [mount], { timeout: 30_000 });
  if (loop) spawnSync(tool('losetup') ?? 'losetup', ['-d', loop], { timeout: 30_000 });
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** A server on `store` that logs its requests into `log`. */
function serve(store: string, log: RequestLogEntry[]): Promise<ReferenceServer> {
  return startReferenceServer({ store, port: 0, secret: SECRET, log: (entry) => log.push(entry) });
}

const client = (server: ReferenceServer, dataDir: string) =>
  createClient({ url: server.url, dataDir, env: {}, configFile: join(scratch, 'no-config.json') });

describe.skipIf(missing !== undefined)(
  `exFAT (a loop device, exfat-fuse)${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    it('as the store of serve: 20 uploads taken, each served back byte for byte', async () => {
      const log: RequestLogEntry[] = [];
      const server = await serve(join(mount, 'store'), log);
      const outbox = join(scratch, 'outbox');
      await mkdir(outbox, { recursive: true });
      const files = Array.from({ length: 20 }, (_, index) => name('mag', index + 1));
      for (const file of files) await writeFile(join(outbox, file), bytesOf(file));
      const uploader = client(server, join(scratch, 'unused-root'));
      const back = client(server, join(scratch, 'back'));
      try {
        const results = await uploader.upload(files.map((file) => join(outbox, file)));
        expect(results.map((result) => result.status)).toEqual(files.map(() => 'uploaded'));
        for (const file of files) {
          const stored = await readFile(join(mount, 'store', ...keyOf(file).split('/')));
          expect(stored.equals(bytesOf(file))).toBe(true);
        }
        const fetched = await back.download(files.map(keyOf));
        expect(fetched.every((result) => result.status === 'downloaded')).toBe(true);
        // A second upload of a stored name is refused, not written over.
        const again = await uploader.upload([join(outbox, files[0] as string)]);
        expect(again[0]?.status).toBe('exists');
      } finally {
        await uploader.close();
        await back.close();
        await server.close();
      }
    }, 120_000);

    it('as the data root: a 100-file batch run again after a remount asks the store for no object', async () => {
      const store = join(scratch, 'store-100');
      const files = Array.from({ length: 100 }, (_, index) => name('swe', index + 1));
      for (const file of files) {
        const path = join(store, ...keyOf(file).split('/'));
        await mkdir(join(path, '..'), { recursive: true });
        await writeFile(path, bytesOf(file));
      }
      const log: RequestLogEntry[] = [];
      const server = await serve(store, log);
      const dataDir = join(mount, 'data');
      const objectGets = () =>
        log.filter((entry) => entry.method === 'GET' && entry.route.startsWith('/objects')).length;
      try {
        const first = client(server, dataDir);
        const downloaded = await first.download(files.map(keyOf));
        await first.close();
        expect(downloaded.filter((result) => result.status === 'downloaded')).toHaveLength(100);
        expect(objectGets()).toBe(100);
        // As when the USB disk is plugged in again: exfat-fuse hands out new inode numbers.
        sh('umount', [mount]);
        mounted = false;
        mountExfat();
        log.length = 0;
        const second = client(server, dataDir);
        const again = await second.download(files.map(keyOf));
        await second.close();
        expect(again.filter((result) => result.status === 'skipped')).toHaveLength(100);
        expect(objectGets()).toBe(0);
      } finally {
        await server.close();
      }
    }, 180_000);
  },
);
