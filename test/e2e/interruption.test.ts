/**
 * Interrupting a batch, as a user at a terminal or a scheduler does: SIGINT and SIGTERM at any point of a
 * batch read from stdin end with 130 and 143, after the summary line and the "run the same command again"
 * line, every time; an upload batch ends the same way. Heavy: run in the main pass only.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  listFiles,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  spawnCli,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';
import { type ShapingProxy, startShapingProxy } from '../helpers/shaping.js';

const INTERRUPT = unixOnly('SIGINT and SIGTERM');

/** 120 files of 1 MiB: enough that eight connections are busy when the signal comes. */
const FILES = Array.from({ length: 120 }, (_, index) => scienceName('swe', index + 1, 'l1b'));
const MIB = 1024 * 1024;
const SIZE = MIB;

let server: TestServer;
/** Slows the transfers down (2 MiB/s per connection, 12 MiB/s in all) so that a signal finds them under way. */
let proxy: ShapingProxy;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  home = await tempDir();
  await Promise.all(FILES.map((name) => putFile(store, name, bytesFor(name, SIZE))));
  server = await startServer({ storeDir: store });
  proxy = await startShapingProxy(server.url, { rate: 2 * MIB, linkRate: 12 * MIB, delayMs: 2 });
});

afterAll(async () => {
  proxy?.stop();
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

describe.skipIf(ON_BACKENDS || INTERRUPT.missing)(INTERRUPT.title('an interrupted batch'), () => {
  it('download - ends 130/143 after its summary, 20 times in a row, and a run left alone completes', {
    timeout: 180_000,
  }, async () => {
    const data = join(home, 'data');
    for (let round = 1; round <= 20; round += 1) {
      // Every round starts afresh, so that eight transfers are starting and running when the signal comes.
      await rm(data, { recursive: true, force: true });
      const signal = round % 2 === 1 ? 'SIGINT' : 'SIGTERM';
      const child = spawnCli(
        ['download', '-', '--url', proxy.url, '--data-dir', data, '--concurrency', '8'],
        {
          cwd: home,
          input: `${FILES.join('\n')}\n`,
        },
      );
      // Each file in place is told on stderr as it lands; the signal follows the line at once, when the next
      // transfers are starting.
      const done = finished(child, 60_000);
      const wanted = 4 * (((round - 1) % 10) + 1);
      let fetched = 0;
      const reached = new Promise<void>((resolve) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          fetched += (chunk.toString('utf8').match(/^downloaded /gm) ?? []).length;
          if (fetched >= wanted) resolve();
        });
      });
      await Promise.race([reached, done]);
      child.kill(signal);
      const result = await done;
      const context = `round ${round} (${signal} once ${wanted} files were complete):\n${result.stderr}`;
      expect(result.code, context).toBe(SIGNALS[signal]);
      expect(result.stderr, context).toMatch(/\d+ not started/);
      expect(result.stderr, context).toMatch(/run the same command again/i);
      // Only files that had started are reported as failed: at most one per transfer under way.
      const failedLines = result.stderr.split('\n').filter((line) => /^failed /.test(line));
      expect(failedLines.length, context).toBeLessThanOrEqual(8);
    }
    const last = await runCli(['download', '-', '--url', proxy.url, '--data-dir', data], {
      cwd: home,
      input: `${FILES.join('\n')}\n`,
    });
    expect(last.code, last.stderr).toBe(0);
    const held = await listFiles(data);
    expect(held).toHaveLength(FILES.length);
    for (const path of held) {
      const name = path.split('/').at(-1) as string;
      expect((await readFile(join(data, path))).equals(bytesFor(name, SIZE)), path).toBe(true);
    }
  });

  it('upload ends 130/143 after its counts line, a few times in a row', { timeout: 120_000 }, async () => {
    const root = join(home, 'upload');
    const names = Array.from({ length: 60 }, (_, index) => scienceName('hi-45', index + 1, 'l2', 'v02-00'));
    const local = await Promise.all(names.map((name) => putFile(root, name, bytesFor(name, 512 * 1024))));
    for (let round = 1; round <= 4; round += 1) {
      const signal = round % 2 === 1 ? 'SIGINT' : 'SIGTERM';
      const listing = join(home, 'uploads.txt');
      await writeFile(listing, local.join('\n'));
      const child = spawnCli(
        ['upload', '--url', proxy.url, '--api-key', 'k', '--concurrency', '4', ...local],
        {
          cwd: root,
        },
      );
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const done = finished(child, 60_000);
      await waitFor(() => /uploaded|exists/i.test(stdout + stderr), 20_000);
      child.kill(signal);
      const result = await done;
      const context = `upload round ${round} (${signal}):\n${result.stderr}`;
      expect(result.code, context).toBe(SIGNALS[signal]);
      expect(result.stderr, context).toMatch(/\d+ not started/);
      expect(result.stderr, context).toMatch(/run the same command again/i);
      const failedLines = result.stderr.split('\n').filter((line) => /^\s*failed\b.*Cancelled/i.test(line));
      expect(failedLines.length, context).toBeLessThanOrEqual(4);
    }
    // The run left alone finishes what the interrupted ones did not.
    const last = await runCli(['upload', '--url', server.url, '--api-key', 'k', ...local], { cwd: root });
    expect(last.code, last.stderr).toBe(0);
  });
});
