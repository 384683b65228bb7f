/**
 * The library's `onProgress`: at most every 100 ms per transfer, and at the end (issue 28), for a download, an
 * upload's MD5 pass and its sending.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { PROGRESS_INTERVAL_MS } from '../../src/core/pace.js';
import {
  bytesFor,
  cleanup,
  ON_BACKENDS,
  putFile,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';
import { type ShapingProxy, startShapingProxy } from '../helpers/shaping.js';

const MIB = 1024 * 1024;
const NAME = scienceName('mag', 9, 'l1b');
const PATH = `imap/mag/l1b/2024/01/${NAME}`;
const SIZE = 12 * MIB;

let server: TestServer;
let proxy: ShapingProxy;
let store: string;
let home: string;

beforeAll(async () => {
  store = await tempDir('mission-store-');
  home = await tempDir();
  await putFile(store, NAME, bytesFor(NAME, SIZE));
  server = await startServer({ storeDir: store, apiKeys: ['k'] });
  // Slow enough that each transfer lasts about a second.
  proxy = await startShapingProxy(server.url, { rate: 12 * MIB, linkRate: 12 * MIB, delayMs: 1 });
});

afterAll(async () => {
  proxy?.stop();
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

/** The gaps between the calls of one kind. */
function paced(times: readonly number[]): number[] {
  return times.slice(1).map((at, index) => at - (times[index] as number));
}

// The shaping proxy sits in front of the server's own object routes; a bucket's downloads go to the store itself.
describe.skipIf(ON_BACKENDS)('onProgress of the library', () => {
  it('a download: at most every 100 ms, and its end', async () => {
    const client = createClient({
      url: proxy.url,
      dataDir: join(home, 'down'),
      env: {},
      configFile: join(home, 'none.json'),
    });
    const times: number[] = [];
    const received: number[] = [];
    let done = 0;
    try {
      await client.download(PATH, {
        connections: 1,
        onProgress: (event) => {
          if (event.done) done += 1;
          else {
            times.push(performance.now());
            received.push(event.received);
          }
        },
      });
    } finally {
      await client.close();
    }
    expect(done).toBe(1);
    expect(times.length).toBeGreaterThan(2);
    expect(times.length).toBeLessThan(40);
    // Every gap is the interval or more on the clock read here, but the one before the call that completes the
    // count: the pace measures on this monotonic clock, from the moment the previous call returned.
    for (const gap of paced(times).slice(0, -1)) expect(gap).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS);
    expect(received.at(-1)).toBe(SIZE);
  });

  it('an upload: each pass at most every 100 ms, and its end', async () => {
    const name = scienceName('mag', 10, 'l1b');
    const local = await putFile(join(home, 'up'), name, bytesFor(name, SIZE));
    const client = createClient({
      url: proxy.url,
      apiKey: 'k',
      dataDir: join(home, 'up'),
      env: {},
      configFile: join(home, 'none.json'),
    });
    const times = { hashing: [] as number[], sending: [] as number[] };
    const last = { hashing: 0, sending: 0 };
    try {
      const [result] = await client.upload(local, {
        onProgress: (event) => {
          if (event.done || !event.phase) return;
          times[event.phase].push(performance.now());
          last[event.phase] = event.phase === 'hashing' ? (event.hashed ?? 0) : event.sent;
        },
      });
      expect(result?.status).toBe('uploaded');
    } finally {
      await client.close();
    }
    expect(last).toEqual({ hashing: SIZE, sending: SIZE });
    expect(times.sending.length).toBeGreaterThan(2);
    for (const phase of ['hashing', 'sending'] as const) {
      expect(times[phase].length).toBeLessThan(40);
      // The first call of the sending (0 bytes) opens it; after that, 100 ms apart but for the end.
      for (const gap of paced(times[phase].slice(1)).slice(0, -1)) {
        expect(gap).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS);
      }
    }
  });
});
