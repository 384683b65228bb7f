/**
 * Route learning under concurrency: the first request to a service goes alone and the rest of the batch
 * follows once the route is known, so the fallback from `/api-key/` to plain routes is paid once per run; and a
 * batch that stops on its first failure (a refused key) sends no more requests than the files it started.
 * Requests are counted at a real reference server.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { makeTempDir, putStoreFile, startTestServer, type TestServer } from '../server/helpers.js';

const KEY = 'key-one';
const names = Array.from({ length: 8 }, (_, at) => {
  const day = String(at + 1).padStart(2, '0');
  return `imap_mag_l1a_norm_202501${day}_202501${day}_v01-00.cdf`;
});
const keyOf = (name: string) => `imap/mag/l1a/2025/01/${name}`;

let server: TestServer | undefined;
let log: string[] = [];
afterEach(async () => {
  await server?.cleanup();
  server = undefined;
});

async function start(options: Parameters<typeof startTestServer>[0], stored: readonly string[] = []) {
  log = [];
  server = await startTestServer(
    { ...options, log: (entry: RequestLogEntry) => log.push(`${entry.status} ${entry.path}`) },
    async (store) => {
      for (const name of stored) await putStoreFile(store, keyOf(name), `bytes of ${name}`);
    },
  );
  return server;
}

/** The server's log once the answers of the run are all logged (they are logged as connections report done). */
async function settled(): Promise<string[]> {
  let seen = -1;
  for (let round = 0; round < 100 && seen !== log.length; round += 1) {
    seen = log.length;
    await new Promise((done) => setTimeout(done, 20));
  }
  return log;
}

async function clientFor(url: string, apiKey: string) {
  const home = await makeTempDir();
  return {
    home,
    client: createClient({
      url,
      apiKey,
      dataDir: join(home, 'data'),
      env: {},
      configFile: join(home, 'missing-config.json'),
      retryBaseMs: 1,
    }),
  };
}

describe('the first request to a service goes alone', () => {
  it('a download batch at concurrency 4 on a service without /api-key/ routes pays the fallback once', async () => {
    const { server: reference } = await start({ dialect: 'spec', apiKeys: [KEY] }, names);
    const { client } = await clientFor(reference.url, KEY);
    const results = await client.download(names.map(keyOf), { concurrency: 4 });
    await client.close();
    expect(results.map((r) => r.status)).toEqual(names.map(() => 'downloaded'));
    const routes = (await settled()).filter((line) => line.includes('/download/'));
    expect(routes.filter((line) => line.includes('/api-key/'))).toEqual([
      `404 /api-key/download/${keyOf(names[0] as string)}`,
    ]);
    expect(routes).toHaveLength(names.length + 1);
  });

  it('an upload batch at concurrency 4 on a service without /api-key/ routes pays the fallback once', async () => {
    const { server: reference } = await start({ dialect: 'spec', apiKeys: [KEY] });
    const { client, home } = await clientFor(reference.url, KEY);
    const folder = join(home, 'data', 'imap', 'mag', 'l1a', '2025', '01');
    await mkdir(folder, { recursive: true });
    for (const name of names) await writeFile(join(folder, name), `bytes of ${name}`);
    const results = await client.upload(
      names.map((name) => join(folder, name)),
      { concurrency: 4 },
    );
    await client.close();
    expect(results.map((r) => r.status)).toEqual(names.map(() => 'uploaded'));
    const routes = (await settled()).filter((line) => line.includes('/upload/'));
    expect(routes.filter((line) => line.includes('/api-key/'))).toHaveLength(1);
    expect(routes).toHaveLength(names.length + 1);
  });
});

describe('a batch stopped by its first failure', () => {
  it('an upload batch with a refused key at concurrency 4 sends at most 2 /upload requests', async () => {
    const { server: reference } = await start({ dialect: 'today', apiKeys: [KEY] });
    const { client, home } = await clientFor(reference.url, 'wrong-key');
    const folder = join(home, 'data', 'imap', 'mag', 'l1a', '2025', '01');
    await mkdir(folder, { recursive: true });
    for (const name of names) await writeFile(join(folder, name), `bytes of ${name}`);
    const results = await client.upload(
      names.map((name) => join(folder, name)),
      { concurrency: 4 },
    );
    await client.close();
    expect(results.every((r) => r.status === 'failed')).toBe(true);
    expect(results.slice(1).every((r) => r.error?.message.startsWith('not attempted'))).toBe(true);
    const routes = (await settled()).filter((line) => line.includes('/upload/'));
    expect(routes.length).toBeGreaterThanOrEqual(1);
    expect(routes.length).toBeLessThanOrEqual(2);
  });

  it('a download batch with a refused key at concurrency 4 sends at most 2 /download requests', async () => {
    const { server: reference } = await start({ dialect: 'today', apiKeys: [KEY] }, names);
    const { client } = await clientFor(reference.url, 'wrong-key');
    const results = await client.download(names.map(keyOf), { concurrency: 4 });
    await client.close();
    expect(results.every((r) => r.status === 'failed')).toBe(true);
    const routes = (await settled()).filter((line) => line.includes('/download/'));
    expect(routes.length).toBeGreaterThanOrEqual(1);
    expect(routes.length).toBeLessThanOrEqual(2);
  });
});
