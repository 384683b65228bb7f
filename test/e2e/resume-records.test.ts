/**
 * Resuming a file fetched over several connections, as the command line meets it: the part's record names the
 * bytes of every connection, finished parts and the written start of those in flight, so the next run fetches
 * only what it does not hold (counted at the server) after a lost network or a SIGKILL; and the checksum the
 * store stated on its first answer, kept in the record, verifies a resumed object whose later answers state none.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FaultOptions } from '../../src/server/faults.js';
import type { ReferenceServer, RequestLogEntry } from '../../src/server/index.js';
import { startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  spawnCli,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { type ShapingProxy, startShapingProxy } from '../helpers/shaping.js';

const MIB = 1024 * 1024;
const NAME = scienceName('swe', 12);
const PATH = `imap/swe/l1a/2024/01/${NAME}`;
/** Twelve parts of 8 MiB over the default 8 connections, each with a part in flight most of the time. */
const SIZE = 96 * MIB;
const CONTENT = bytesFor('resume-records', SIZE);
/** What the next run may fetch beyond the bytes not on disk: 4 MiB for each of up to 8 connections. */
const SLACK = 8 * 4 * MIB;

let storeDir: string;
let home: string;
let servers: ReferenceServer[];
let proxies: ShapingProxy[];
let log: RequestLogEntry[];

const folder = () => join(home, 'data', 'imap/swe/l1a/2024/01');

beforeAll(() => assertBuilt());
beforeEach(async () => {
  storeDir = await tempDir('mission-store-');
  home = await tempDir('mission-home-');
  servers = [];
  proxies = [];
  log = [];
  await putFile(storeDir, PATH, CONTENT);
});
afterEach(async () => {
  for (const proxy of proxies) proxy.stop();
  for (const server of servers) await server.close();
  await cleanup(storeDir);
  await cleanup(home);
});

async function serve(faults: FaultOptions = {}): Promise<ReferenceServer> {
  const server = await startReferenceServer({
    store: storeDir,
    port: 0,
    secret: 'resume-records-secret-0123456789',
    faults,
    log: (entry) => log.push(entry),
  });
  servers.push(server);
  return server;
}

const args = (url: string, ...extra: string[]) => [
  'download',
  PATH,
  '--url',
  url,
  '--data-dir',
  join(home, 'data'),
  '--part-size',
  '8',
  ...extra,
];

const download = (url: string, ...extra: string[]) =>
  runCli(args(url, ...extra), { cwd: home, timeoutMs: 60_000 });

const objectBytes = () =>
  log
    .filter((entry) => entry.method === 'GET' && entry.path.startsWith('/objects/'))
    .reduce((total, entry) => total + (entry.bytes ?? 0), 0);

/** The part's record beside the file, as the next run reads it; undefined when there is none (yet). */
async function record(): Promise<Record<string, unknown> | undefined> {
  const name = (await readdir(folder()).catch(() => [] as string[])).find((entry) =>
    /\.part\.\d+\.json$/.test(entry),
  );
  if (name === undefined) return undefined;
  try {
    return JSON.parse(await readFile(join(folder(), name), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Bytes the record names: from byte 0, and in the ranges after them. */
async function held(): Promise<number> {
  const found = await record();
  const parts = (found?.parts ?? []) as Array<[number, number]>;
  return Number(found?.written ?? 0) + parts.reduce((sum, [from, to]) => sum + (to - from), 0);
}

/** Bytes of the object the part file holds: its 4 KiB blocks that are the object's (a hole reads as zeros). */
async function onDisk(): Promise<number> {
  const name = (await readdir(folder())).find((entry) => /\.part\.\d+$/.test(entry));
  if (name === undefined) return 0;
  const part = await readFile(join(folder(), name));
  const block = 4096;
  let same = 0;
  for (let at = 0; at + block <= Math.min(part.length, SIZE); at += block) {
    if (part.subarray(at, at + block).equals(CONTENT.subarray(at, at + block))) same += block;
  }
  return same;
}

/**
 * Runs the download to its end from a new server: the file ends whole and verified, and the run fetched at most
 * the bytes the part did not hold and 4 MiB a connection (the record of a killed run may lag that far behind).
 */
async function resumeAndCheck(present: number, faults: FaultOptions = {}) {
  const server = await serve(faults);
  log = [];
  const resumed = await download(server.url, '--output-format', 'json');
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(JSON.parse(resumed.stdout)).toMatchObject([{ status: 'downloaded', verified: true }]);
  expect((await readFile(join(folder(), NAME))).equals(CONTENT)).toBe(true);
  expect(await readdir(folder())).toEqual([NAME]);
  const fetched = objectBytes();
  expect(fetched).toBeLessThanOrEqual(SIZE - present + SLACK);
  return fetched;
}

describe.skipIf(ON_BACKENDS)('resuming a file fetched over several connections', () => {
  it('after a lost network, the next run fetches only the bytes not on disk', async () => {
    const first = await serve({ outage: { afterBytes: 40 * MIB, forMs: 120_000 } });
    const failed = await download(first.url, '--retries', '0');
    expect(failed.code).toBe(1);
    const said = /(\d+) bytes of \d+ are kept in (\S+); the next run resumes from them/.exec(failed.stderr);
    expect(said, failed.stderr).not.toBeNull();
    const kept = await held();
    const present = await onDisk();
    // The record names what the run said it kept, and that is every byte on disk: the parts in flight too.
    expect(kept).toBe(Number(said?.[1]));
    expect(kept).toBeGreaterThanOrEqual(present - 6 * 4096);
    expect(present).toBeGreaterThanOrEqual(16 * MIB);
    expect(present).toBeLessThan(SIZE);
    const fetched = await resumeAndCheck(present);
    expect(fetched).toBeGreaterThanOrEqual(SIZE - kept);
    console.log(`lost network: size ${SIZE}, on disk ${present}, held ${kept}, refetched ${fetched}`);
  });

  it('after a SIGKILL, the next run fetches at most 4 MiB a connection more than the bytes not on disk', async () => {
    const server = await serve();
    // 3 MiB/s per connection: the kill lands while every connection is in the middle of its part.
    const proxy = await startShapingProxy(server.url, { rate: 3 * MIB, linkRate: 0, delayMs: 0 });
    proxies.push(proxy);
    const child = spawnCli(args(proxy.url), { cwd: home });
    const run = finished(child, 60_000);
    expect(await waitFor(async () => (await record()) !== undefined, 15_000)).toBe(true);
    await new Promise((done) => setTimeout(done, 2500));
    child.kill('SIGKILL');
    await run;
    const kept = await held();
    const present = await onDisk();
    expect(present).toBeGreaterThanOrEqual(16 * MIB);
    expect(present).toBeLessThan(SIZE);
    const fetched = await resumeAndCheck(present);
    console.log(`SIGKILL: size ${SIZE}, on disk ${present}, held ${kept}, refetched ${fetched}`);
  });

  it('a KMS-like object (x-amz-checksum-* on the whole-object answer only) resumed by a second run is verified', async () => {
    const faults: FaultOptions = { kms: true, checksums: ['crc32c'] };
    const first = await serve({ ...faults, outage: { afterBytes: 40 * MIB, forMs: 120_000 } });
    const failed = await download(first.url, '--retries', '0');
    expect(failed.code).toBe(1);
    expect(await held()).toBeGreaterThan(0);
    expect(await record()).toMatchObject({
      checksum: { algorithm: 'crc32c', source: 'x-amz-checksum-crc32c' },
    });
    await resumeAndCheck(await onDisk(), faults);
  });
});
