/**
 * The sync lock and the download runs' entries trust no pid and no host name alone: their owners touch them while
 * they run, and one untouched for longer than the stale age is taken over (the lock) or forgotten (an entry),
 * whatever process its pid now names (Windows hands pids on within minutes) and whichever host it names. The ages
 * are shortened here (a running owner refreshes every 200 ms, stale after 1.5 s), or a file's time set back.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BusyError } from '../../src/core/errors.js';
import { hostId } from '../../src/core/host-id.js';
import { DownloadRuns } from '../../src/data-root/runs.js';
import { STATE_FOLDER } from '../../src/data-root/state-folder.js';
import { acquireLock } from '../../src/data-root/sync-lock.js';
import { cleanup, ROOT, tempDir, waitFor } from '../helpers/e2e.js';

const SHORT = { refreshMs: 200, staleMs: 1500 };
const THREE_MINUTES_AGO = () => new Date(Date.now() - 3 * 60_000);
const DEAD_PID = 2 ** 22 + 7;

let home: string;
let holderScript: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  home = await tempDir('mission-lock-');
  vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
  // A process that holds a lock and a run's entry as a sync does, with the ages it is given.
  const { build } = await import('esbuild');
  const outfile = join(home, 'holder.mjs');
  await build({
    stdin: {
      contents: `
        import { acquireLock } from './src/data-root/sync-lock.ts';
        import { DownloadRuns } from './src/data-root/runs.ts';
        const [folder, root, refreshMs, staleMs] = process.argv.slice(2);
        const ages = { refreshMs: Number(refreshMs), staleMs: Number(staleMs) };
        await acquireLock(folder, 'one', 'sync', ages);
        DownloadRuns.join(root, ages);
        process.stdout.write('held\\n');
        setInterval(() => {}, 60_000);
      `,
      resolveDir: ROOT,
      sourcefile: 'holder.ts',
      loader: 'ts',
    },
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  holderScript = outfile;
}, 60_000);

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await cleanup(home);
});

/** A live process of this host that is not a sync (nor a download run). */
function bystander(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

/** A process that takes the lock `<folder>/one.lock` and an entry among the runs of `root`, and keeps them. */
async function holder(folder: string, root: string, ages: { refreshMs: number; staleMs: number }) {
  const child = spawn(
    process.execPath,
    [holderScript, folder, root, String(ages.refreshMs), String(ages.staleMs)],
    {
      env: { ...process.env, XDG_CONFIG_HOME: join(home, 'config') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  expect(await waitFor(() => out.includes('held'), 20_000)).toBe(true);
  return child.pid as number;
}

/** Writes a lock file as a run of `host` with process `pid` left it, untouched since `time` (default now). */
async function placeLock(folder: string, pid: number, host: string, time?: Date): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = join(folder, 'one.lock');
  await writeFile(file, `${JSON.stringify({ pid, host, since: new Date().toISOString() })}\n`);
  if (time) await utimes(file, time, time);
  return file;
}

const attempt = (folder: string, ages = {}) =>
  acquireLock(folder, 'one', 'sync', ages).catch((error: unknown) => error);

/** Takes the lock and says whose it then is, releasing it. */
async function takenOver(folder: string, ages = {}): Promise<number> {
  const lock = await acquireLock(folder, 'one', 'sync', ages);
  const pid = JSON.parse(await readFile(lock.file, 'utf8')).pid as number;
  await lock.release();
  expect(existsSync(lock.file)).toBe(false);
  return pid;
}

describe('the sync lock', () => {
  it('is held against a live process of this host while fresh, and taken over once untouched for the stale age', async () => {
    const folder = join(home, 'live-pid');
    const pid = bystander();
    await placeLock(folder, pid, hostId());
    const refused = await attempt(folder);
    expect(refused).toBeInstanceOf(BusyError);
    expect((refused as BusyError).exitCode).toBe(75);
    expect((refused as BusyError).message).toContain(`(process ${pid}, since`);
    // The same lock, its pid still alive (now some other program's), nobody touching it for three minutes.
    await placeLock(folder, pid, hostId(), THREE_MINUTES_AGO());
    expect(await takenOver(folder)).toBe(process.pid);
  });

  it('takes over a lock of another host once untouched for the stale age, not before', async () => {
    const folder = join(home, 'other-host');
    await placeLock(folder, 4242, 'another-machine-id-0001');
    const refused = await attempt(folder);
    expect(refused).toBeInstanceOf(BusyError);
    expect((refused as BusyError).message).toContain('process 4242 on host another-machine-id-0001');
    await placeLock(folder, 4242, 'another-machine-id-0001', THREE_MINUTES_AGO());
    expect(await takenOver(folder)).toBe(process.pid);
  });

  it('reads a lock of an earlier version (the host name) as this host: a dead pid is taken over at once', async () => {
    const folder = join(home, 'host-name');
    await placeLock(folder, DEAD_PID, hostname());
    expect(await takenOver(folder)).toBe(process.pid);
    await placeLock(folder, bystander(), hostname(), THREE_MINUTES_AGO());
    expect(await takenOver(folder)).toBe(process.pid);
  });

  it('is not taken over while its owner runs and touches it, and is once it stops touching it', async () => {
    const folder = join(home, 'running');
    const owner = await holder(folder, join(home, 'running-root'), SHORT);
    await new Promise((done) => setTimeout(done, 2.5 * SHORT.staleMs));
    const refused = await attempt(folder, SHORT);
    expect(refused).toBeInstanceOf(BusyError);
    expect((refused as BusyError).message).toContain(`process ${owner}`);

    // The same owner alive, but not touching its lock in time: the age alone decides.
    const sleepy = join(home, 'sleepy');
    await holder(sleepy, join(home, 'sleepy-root'), { refreshMs: 60_000, staleMs: SHORT.staleMs });
    await new Promise((done) => setTimeout(done, 1.5 * SHORT.staleMs));
    expect(await takenOver(sleepy, SHORT)).toBe(process.pid);
  });

  it('leaves a lock being written alone for a few seconds, and takes it over when it stays unreadable', async () => {
    const folder = join(home, 'unreadable');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'one.lock');
    await writeFile(file, '');
    expect((await attempt(folder)) as BusyError).toBeInstanceOf(BusyError);
    await utimes(file, new Date(Date.now() - 11_000), new Date(Date.now() - 11_000));
    expect(await takenOver(folder)).toBe(process.pid);
  });

  it('is touched by its owner while held, and no more once released', async () => {
    const folder = join(home, 'touched');
    const lock = await acquireLock(folder, 'one', 'sync', { refreshMs: 100, staleMs: 10_000 });
    const then = new Date(Date.now() - 60_000);
    await utimes(lock.file, then, then);
    const fresh = async () => Date.now() - (await import('node:fs')).statSync(lock.file).mtimeMs < 5_000;
    expect(await waitFor(fresh, 3_000)).toBe(true);
    await lock.release();
    expect(existsSync(lock.file)).toBe(false);
  });
});

describe('the download runs of a data root', () => {
  /** Puts an entry among the runs of `root` as a run of `pid` on `host` left it, untouched since `time`. */
  async function placeEntry(root: string, pid: number, host: string, time?: Date): Promise<string> {
    const folder = join(root, STATE_FOLDER, 'runs');
    await mkdir(folder, { recursive: true });
    const file = join(folder, `${pid}-abc123@${host}`);
    await writeFile(file, '');
    if (time) await utimes(file, time, time);
    return file;
  }

  it('forgets, and removes, an entry untouched for the stale age whatever its pid or host', async () => {
    const root = join(home, 'runs-stale');
    const live = bystander();
    const mine = await placeEntry(root, live, hostId(), THREE_MINUTES_AGO());
    const other = await placeEntry(root, 4243, 'another-machine-id-0001', THREE_MINUTES_AGO());
    const old = await placeEntry(root, DEAD_PID, hostname().replace(/[^A-Za-z0-9.-]/g, '_'));
    const runs = DownloadRuns.join(root, SHORT);
    try {
      expect(runs?.others()).toEqual([]);
      for (const file of [mine, other, old]) expect(existsSync(file), file).toBe(false);
    } finally {
      runs?.leave();
    }
  });

  it('counts fresh entries of a live process of this host and of another host', async () => {
    const root = join(home, 'runs-fresh');
    const live = bystander();
    await placeEntry(root, live, hostId());
    await placeEntry(root, 4244, 'another-machine-id-0001');
    const runs = DownloadRuns.join(root, SHORT);
    try {
      expect([...(runs?.others() ?? [])].sort()).toEqual([live, 4244].sort());
      expect(runs?.shared).toBe(true);
    } finally {
      runs?.leave();
    }
    expect((await readdir(join(root, STATE_FOLDER, 'runs'))).length).toBe(2);
  });

  it('keeps counting a run that touches its entry, and forgets one that stopped touching it', async () => {
    const root = join(home, 'runs-running');
    const running = await holder(join(home, 'runs-running-lock'), root, SHORT);
    const sleepy = await holder(join(home, 'runs-sleepy-lock'), root, { refreshMs: 60_000, staleMs: 60_000 });
    const runs = DownloadRuns.join(root, SHORT);
    try {
      expect([...(runs?.others() ?? [])].sort()).toEqual([running, sleepy].sort());
      await new Promise((done) => setTimeout(done, 2 * SHORT.staleMs));
      expect(runs?.others()).toEqual([running]);
    } finally {
      runs?.leave();
    }
  });
});
