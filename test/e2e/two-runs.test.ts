/**
 * Two runs at once on one data root (issue 36): two `download` runs of one batch, and two `sync` runs whose filter
 * sets overlap, never fetch the same bytes twice (counted at the server), and both end 0 with counts that add up.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  listFiles,
  ON_BACKENDS,
  putFile,
  scienceName,
  spawnCli,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const FILES = 300;
let server: TestServer;
let store: string;
let log: RequestLogEntry[] = [];
const paths: string[] = [];
let batchBytes = 0;

/** A file of 20 to 60 kB per index, across three instruments and two months. */
function fileOf(index: number): { path: string; bytes: Buffer } {
  const instrument = ['mag', 'swe', 'hit'][index % 3] as string;
  const name = scienceName(instrument, 1 + Math.floor(index / 3));
  const bytes = bytesFor(name, 20_000 + ((index * 7919) % 40_000));
  return { path: name, bytes };
}

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  for (let index = 0; index < FILES; index += 1) {
    const { path, bytes } = fileOf(index);
    paths.push(await putFile(store, path, bytes).then(() => path));
    batchBytes += bytes.length;
  }
  server = await startServer({ storeDir: store, log: (entry) => log.push(entry) });
});
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
});

/** Object bytes the server handed out since the log was emptied. */
const objectBytes = () =>
  log.reduce(
    (sum, entry) =>
      sum + (entry.route === '/objects/{key}' && entry.method === 'GET' ? (entry.bytes ?? 0) : 0),
    0,
  );

/** Counts of a summary line such as "12 downloaded, 8 skipped". */
function counted(stderr: string, word: string): number {
  const found = new RegExp(`(\\d+) ${word}`).exec(stderr);
  return found ? Number(found[1]) : 0;
}

// The bytes are counted in the reference server's request log: on the backends the object store serves them.
describe.skipIf(ON_BACKENDS)('two download runs of one batch on one data root', () => {
  it('fetch each byte once between them, and both end 0 with the batch counted', async () => {
    const home = await tempDir();
    try {
      log = [];
      const args = ['download', ...paths, '--url', server.url, '--data-dir', join(home, 'data')];
      const [first, second] = await Promise.all([
        finished(spawnCli(args, { cwd: home }), 120_000),
        finished(spawnCli(args, { cwd: home }), 120_000),
      ]);
      expect(first.code, first.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      expect(objectBytes()).toBe(batchBytes);
      const downloaded = counted(first.stderr, 'downloaded') + counted(second.stderr, 'downloaded');
      const skipped = counted(first.stderr, 'skipped') + counted(second.stderr, 'skipped');
      expect(downloaded).toBe(FILES);
      expect(skipped).toBe(FILES);
      expect(first.stderr + second.stderr).not.toMatch(/failed/);
      expect((await listFiles(join(home, 'data'))).length).toBe(FILES);
    } finally {
      await cleanup(home);
    }
  }, 180_000);
});

describe.skipIf(ON_BACKENDS)('two sync runs with overlapping filter sets on one data root', () => {
  it('both complete, and the files both sets hold are fetched once', async () => {
    const home = await tempDir();
    try {
      log = [];
      const common = ['--url', server.url, '--data-dir', join(home, 'data')];
      // Every swe file, and the swe files from 10 January on: those are in both sets.
      const [first, second] = await Promise.all([
        finished(spawnCli(['sync', '--instrument', 'swe', ...common], { cwd: home }), 120_000),
        finished(
          spawnCli(['sync', '--instrument', 'swe', '--start-date', '20240110', ...common], { cwd: home }),
          120_000,
        ),
      ]);
      expect(first.code, first.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      const swe = paths.map((path, index) => ({ path, index })).filter(({ index }) => index % 3 === 1);
      const sweBytes = swe.reduce((sum, { index }) => sum + fileOf(index).bytes.length, 0);
      expect(objectBytes()).toBe(sweBytes);
      expect((await listFiles(join(home, 'data'))).length).toBe(swe.length);
    } finally {
      await cleanup(home);
    }
  }, 180_000);
});
