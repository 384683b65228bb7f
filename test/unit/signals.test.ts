/**
 * Every closing signal ends a run as SIGTERM does: the abort runs, the sync lock is released, `serve` drains, and
 * the exit status is the one shells expect (129 for SIGHUP). In-process through `main` with `process.emit` (the
 * way Windows delivers SIGHUP and SIGBREAK to Node: as events, never as a kill), and a spawned command line sent
 * a real SIGHUP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ExitCode } from '../../src/core/errors.js';
import { CLOSING_SIGNALS, closingSignals } from '../../src/core/signals.js';
import { stateFolder } from '../../src/data-root/state-folder.js';
import { syncId } from '../../src/data-root/sync-state.js';
import {
  cleanEnv,
  cleanup,
  finished,
  ROOT,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';
import { type ShapingProxy, startShapingProxy } from '../helpers/shaping.js';

let home: string;
let server: TestServer;
/** The server behind a proxy that holds every request 3 s: a sync holds its lock that long. */
let slow: ShapingProxy;

beforeAll(async () => {
  home = await tempDir('mission-signals-');
  server = await startServer();
  slow = await startShapingProxy(server.url, { rate: 1e9, linkRate: 1e9, delayMs: 3000 });
  vi.stubEnv('MISSION_DATA_CONFIG', join(home, 'none.json'));
  vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  slow?.stop();
  await server?.stop();
  await cleanup(home);
});

/** Resolves with `work`'s value, or with `timedOut` once `ms` have passed. */
function within<T>(work: Promise<T>, ms: number, timedOut: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((done) => {
    timer = setTimeout(() => done(timedOut), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The lock files of a data root's state folder. */
async function locks(dataDir: string): Promise<string[]> {
  const names = await readdir(stateFolder(dataDir)).catch(() => []);
  return names.filter((name) => name.endsWith('.lock'));
}

describe('the closing signals', () => {
  it('are one table: SIGINT, SIGTERM, SIGHUP and SIGBREAK, each ending with 128 + its number', () => {
    expect(closingSignals).toEqual(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']);
    expect(CLOSING_SIGNALS.SIGINT).toBe(ExitCode.Interrupted);
    expect(CLOSING_SIGNALS.SIGTERM).toBe(ExitCode.Terminated);
    expect(CLOSING_SIGNALS.SIGHUP).toBe(129);
    expect(CLOSING_SIGNALS.SIGBREAK).toBe(149);
  });

  it.each([
    ['SIGHUP', 129],
    ['SIGBREAK', 149],
    ['SIGTERM', 143],
  ] as const)('%s cancels a running sync: its lock released, exit %i', async (signal, status) => {
    const dataDir = join(home, `data-${signal}`);
    const args = ['sync', '--url', slow.url, '--instrument', 'hit', '--data-dir', dataDir, '--quiet'];
    const run = main(['node', 'mission-data', ...args]);
    expect(await waitFor(async () => (await locks(dataDir)).length === 1)).toBe(true);
    process.emit(signal);
    expect(await within(run, 10_000, -1)).toBe(status);
    expect(await locks(dataDir)).toEqual([]);
    expect(process.listenerCount(signal)).toBe(0);
  });

  it.each(['SIGHUP', 'SIGBREAK'] as const)('%s drains serve, which ends with 0', async (signal) => {
    const store = join(home, `store-${signal}`);
    await mkdir(store, { recursive: true });
    let listening = '';
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      listening += String(chunk);
      return true;
    });
    try {
      const run = main(['node', 'mission-data', 'serve', '--port', '0', '--store', store, '--quiet']);
      expect(await waitFor(() => listening.includes('Listening on'))).toBe(true);
      const url = /Listening on (\S+)/.exec(listening)?.[1] as string;
      expect((await fetch(`${url}/health`)).ok).toBe(true);
      process.emit(signal);
      expect(await within(run, 10_000, -1)).toBe(0);
      // Stopped: nothing listens there any more.
      expect(
        await fetch(`${url}/health`).then(
          () => 'answered',
          () => 'refused',
        ),
      ).toBe('refused');
    } finally {
      stdout.mockRestore();
    }
  });
});

// A child sent SIGHUP on Windows is ended outright: its handler never runs there.
const SIGHUP = unixOnly('SIGHUP');

describe.skipIf(SIGHUP.missing)(SIGHUP.title('a command line sent SIGHUP'), () => {
  let entry: string;

  beforeAll(async () => {
    // The command line as it ships, bundled from the sources here (dist/ is others' to build).
    const { build } = await import('esbuild');
    const outdir = join(home, 'bundle');
    await build({
      stdin: {
        contents: "import { main } from './src/cli/main.ts';\nprocess.exitCode = await main(process.argv);\n",
        resolveDir: ROOT,
        sourcefile: 'entry.ts',
        loader: 'ts',
      },
      outdir,
      entryNames: 'entry',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    entry = join(outdir, 'entry.mjs');
  }, 60_000);

  /** Starts a sync in `cwd` (its home and configuration folder), slowed down so that it holds its lock a while. */
  function startSync(cwd: string, dataDir: string): { child: ChildProcess; stderr: () => string } {
    const args = ['sync', '--url', slow.url, '--instrument', 'hit', '--data-dir', dataDir];
    const child = spawn(process.execPath, [entry, ...args], { cwd, env: cleanEnv(cwd), stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    return { child, stderr: () => stderr };
  }

  it('takes over a stale lock naming a live process, then ends with 129 and its lock released', {
    timeout: 60_000,
  }, async () => {
    const cwd = await tempDir('mission-sighup-');
    try {
      const dataDir = join(cwd, 'data');
      // The child's host id, kept in its configuration folder; a lock of this host whose pid (this test's
      // process) is alive but that nobody touched for three minutes.
      const id = 'c0ffee00-0000-4000-8000-000000000001';
      await mkdir(join(cwd, 'config', 'mission-data'), { recursive: true });
      await writeFile(join(cwd, 'config', 'mission-data', 'host-id'), `${id}\n`);
      const lock = join(
        stateFolder(dataDir),
        `${syncId({ url: slow.url, filters: { instrument: 'hit' }, allVersions: false })}.lock`,
      );
      await mkdir(stateFolder(dataDir), { recursive: true });
      await writeFile(lock, JSON.stringify({ pid: process.pid, host: id, since: new Date().toISOString() }));
      const then = new Date(Date.now() - 3 * 60_000);
      await utimes(lock, then, then);

      const { child, stderr } = startSync(cwd, dataDir);
      const ended = finished(child, 30_000);
      // The lock is created, then written: read between the two, it is empty (no owner yet).
      const owner = async (): Promise<{ pid?: number }> => {
        try {
          return JSON.parse(await readFile(lock, 'utf8')) as { pid?: number };
        } catch {
          return {};
        }
      };
      expect(await waitFor(async () => (await owner()).pid === child.pid), stderr()).toBe(true);
      expect(await owner()).toMatchObject({ pid: child.pid, host: id });
      child.kill('SIGHUP');
      const run = await ended;
      expect({ code: run.code, signal: run.signal }, stderr()).toEqual({ code: 129, signal: null });
      expect(existsSync(lock)).toBe(false);
    } finally {
      await cleanup(cwd);
    }
  });

  it('with its terminal gone (output closed), still ends with 129 and its lock released', {
    timeout: 60_000,
  }, async () => {
    const cwd = await tempDir('mission-sighup-');
    try {
      const dataDir = join(cwd, 'data');
      const { child } = startSync(cwd, dataDir);
      const ended = finished(child, 30_000);
      const lock = join(
        stateFolder(dataDir),
        `${syncId({ url: slow.url, filters: { instrument: 'hit' }, allVersions: false })}.lock`,
      );
      expect(await waitFor(() => existsSync(lock))).toBe(true);
      // A closed terminal: every later write fails (EPIPE here, EIO on a terminal).
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.kill('SIGHUP');
      const run = await ended;
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 129, signal: null });
      expect(existsSync(lock)).toBe(false);
    } finally {
      await cleanup(cwd);
    }
  });
});
