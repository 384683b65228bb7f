/**
 * Bounded in time: a store that freezes mid-download ends the run within (retries + 1) x --timeout plus the
 * backoff, for one file over 8 connections and for a batch (which stops once, the rest not started), and says
 * which side went quiet; a service that answers 500 for a while is asked again and the run succeeds.
 * Heavy (it waits for timeouts): run in the main pass only.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';
import { startFreezingProxy } from '../helpers/freezing-proxy.js';

const MIB = 1024 * 1024;
const LARGE = scienceName('idex', 3, 'l1a');
const LARGE_BYTES = bytesFor(LARGE, 6 * MIB);
const SMALL = Array.from({ length: 20 }, (_, index) => scienceName('glows', index + 1, 'l1a'));

/** --timeout 5 --retries 2: three attempts of at most 5 s, and the backoff between them (at most 1 + 2 s). */
const BACKOFF_MS = 3000;
const TIMEOUT_S = 5;
const RETRIES = 2;
const BOUND_MS = (RETRIES + 1) * TIMEOUT_S * 1000 + BACKOFF_MS + 15_000;

let server: TestServer;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  home = await tempDir();
  await putFile(store, LARGE, LARGE_BYTES);
  await Promise.all(SMALL.map((name) => putFile(store, name, bytesFor(name, 512 * 1024))));
  server = await startServer({ storeDir: store });
});

afterAll(async () => {
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

const bounded = ['--timeout', String(TIMEOUT_S), '--retries', String(RETRIES)];

describe.skipIf(ON_BACKENDS)('a store that freezes', () => {
  it('ends a download over 8 connections within (retries + 1) x timeout, keeping what it holds', {
    timeout: 60_000,
  }, async () => {
    const proxy = await startFreezingProxy(server.url, { freezeAfter: 2 * MIB });
    const data = join(home, 'one');
    try {
      const started = Date.now();
      const result = await runCli(
        ['download', LARGE, '--url', proxy.url, '--data-dir', data, '--part-size', '1', ...bounded],
        { cwd: home, timeoutMs: 120_000 },
      );
      const elapsed = Date.now() - started;
      expect(proxy.frozen).toBe(true);
      expect(result.code, result.stderr).toBe(1);
      expect(elapsed, result.stderr).toBeLessThan(BOUND_MS);
      expect(result.stderr).toMatch(/object store('s answer stalled| within 5 s)/);
      expect(result.stderr).toMatch(/gave up after \d+ attempts/);
      expect(result.stderr).toMatch(/--timeout/);
      expect(result.stderr).toMatch(/kept/);
    } finally {
      await proxy.close();
    }
    // The store answers again: the next run completes from what the first one kept.
    const again = await runCli(['download', LARGE, '--url', server.url, '--data-dir', data], { cwd: home });
    expect(again.code, again.stderr).toBe(0);
    const local = join(data, 'imap/idex/l1a/2024/01', LARGE);
    expect((await readFile(local)).equals(LARGE_BYTES)).toBe(true);
  });

  it('stops a batch once, the files not begun counted as not started, within the same bound', {
    timeout: 60_000,
  }, async () => {
    const proxy = await startFreezingProxy(server.url, { freezeAfter: 3 * MIB });
    try {
      const started = Date.now();
      const result = await runCli(
        [
          'download',
          ...SMALL,
          '--url',
          proxy.url,
          '--data-dir',
          join(home, 'batch'),
          '--concurrency',
          '4',
          ...bounded,
        ],
        { cwd: home, timeoutMs: 120_000 },
      );
      const elapsed = Date.now() - started;
      expect(result.code, result.stderr).toBe(1);
      expect(elapsed, result.stderr).toBeLessThan(BOUND_MS);
      expect(result.stderr).toMatch(/\d+ not started/);
      expect(result.stderr).toMatch(/Stopped: .* not started, as the object store stopped answering/);
      // At most one failure line per transfer under way when the store froze.
      expect(
        result.stderr.split('\n').filter((line) => line.startsWith('failed ')).length,
      ).toBeLessThanOrEqual(4);
    } finally {
      await proxy.close();
    }
  });
});

describe.skipIf(ON_BACKENDS)('a service that fails for a while', () => {
  it('answers /query with 500 twice, then 200: the query succeeds', async () => {
    const proxy = await startFreezingProxy(server.url, {
      failApi: { prefix: '/query', count: 2, status: 500 },
    });
    try {
      const result = await runCli(
        ['query', '--instrument', 'glows', '--url', proxy.url, '--output-format', 'json'],
        {
          cwd: home,
        },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(proxy.apiFailures).toBe(2);
      expect(JSON.parse(result.stdout)).toHaveLength(SMALL.length);
    } finally {
      await proxy.close();
    }
  });

  it('answers /download with 500 more often than the retries allow: the message names the URL', async () => {
    const proxy = await startFreezingProxy(server.url, {
      failApi: { prefix: '/download', count: 100, status: 500 },
    });
    try {
      const result = await runCli(['download', SMALL[0] as string, '--url', proxy.url, '--retries', '1'], {
        cwd: home,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`GET ${proxy.url}/download/`);
      expect(result.stderr).toMatch(/500 .*gave up after 2 attempts/);
      expect(proxy.apiFailures).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
