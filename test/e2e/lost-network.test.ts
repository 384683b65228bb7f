/**
 * A lost network, as the command line meets it: the part file and its record survive a failed run and the next
 * run fetches only the missing bytes (counted at the server); an outage of a few seconds heals within one run.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ReferenceServer, RequestLogEntry } from '../../src/server/index.js';
import { startReferenceServer } from '../../src/server/index.js';
import { assertBuilt, bytesFor, cleanup, putFile, runCli, scienceName, tempDir } from '../helpers/e2e.js';

const NAME = scienceName('mag', 11);
const PATH = `imap/mag/l1a/2024/01/${NAME}`;
const SIZE = 12 * 1024 * 1024;
const CONTENT = bytesFor('lost-network', SIZE);

let storeDir: string;
let home: string;
let servers: ReferenceServer[];
let log: RequestLogEntry[];

beforeAll(() => assertBuilt());
beforeEach(async () => {
  storeDir = await tempDir('mission-store-');
  home = await tempDir('mission-home-');
  servers = [];
  log = [];
  await putFile(storeDir, PATH, CONTENT);
});
afterEach(async () => {
  for (const server of servers) await server.close();
  await cleanup(storeDir);
  await cleanup(home);
});

async function serve(outage?: { afterBytes: number; forMs: number }): Promise<ReferenceServer> {
  const server = await startReferenceServer({
    store: storeDir,
    port: 0,
    secret: 'lost-network-secret-0123456789',
    ...(outage ? { faults: { outage } } : {}),
    log: (entry) => log.push(entry),
  });
  servers.push(server);
  return server;
}

const download = (url: string, ...extra: string[]) =>
  runCli(['download', PATH, '--url', url, '--data-dir', join(home, 'data'), ...extra], {
    cwd: home,
    timeoutMs: 60_000,
  });

const objectBytes = () =>
  log
    .filter((entry) => entry.method === 'GET' && entry.path.startsWith('/objects/'))
    .reduce((total, entry) => total + (entry.bytes ?? 0), 0);

describe('lost network', () => {
  it('a run that loses the network keeps its part; the next run fetches only the missing bytes', async () => {
    // The network goes away for longer than the run is willing to wait (no retries).
    const first = await serve({ afterBytes: 4 * 1024 * 1024, forMs: 120_000 });
    const failed = await download(first.url, '--retries', '0');
    expect(failed.code).toBe(1);
    const kept = /(\d+) bytes of \d+ are kept in (\S+); the next run resumes from them/.exec(failed.stderr);
    expect(kept, failed.stderr).not.toBeNull();
    const held = Number(kept?.[1]);
    expect(held).toBeGreaterThan(0);
    const folder = join(home, 'data', 'imap/mag/l1a/2024/01');
    expect((await readdir(folder)).filter((name) => name.includes('.part.'))).toHaveLength(2);

    const second = await serve();
    log = [];
    const resumed = await download(second.url);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await readFile(join(folder, NAME))).equals(CONTENT)).toBe(true);
    // Counted at the server: exactly the bytes the part did not hold.
    expect(objectBytes()).toBe(SIZE - held);
    expect(await readdir(folder)).toEqual([NAME]);
  });

  it('a 3-second outage during one run ends in a complete, verified file', async () => {
    const server = await serve({ afterBytes: 4 * 1024 * 1024, forMs: 3_000 });
    const run = await download(server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("The file was verified against the store's checksum.");
    const local = await readFile(join(home, 'data', PATH));
    expect(local.equals(CONTENT)).toBe(true);
    // The run resumed from the bytes it held: the object was not sent twice over.
    expect(objectBytes()).toBeLessThan(2 * SIZE);
  });
});
