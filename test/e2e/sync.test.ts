/**
 * `sync` through the built command line against the reference server: a first run, a run with nothing new (no
 * `/download` request, counted at the server), new files and a new version, `--prune`, two runs at once, an
 * interrupted run resumed, and `--watch` picking up an upload.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePathOrName } from '../../src/naming/names.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  listFiles,
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

const SIGNALS = unixOnly('SIGINT');

const MIB = 1024 * 1024;
const pathOf = (name: string) => parsePathOrName(name).path;

let server: TestServer;
let producer: string;
let consumer: string;
let requests: RequestLogEntry[] = [];

/** Puts the files in the archive as a producer does: `mission-data upload` from its own data root. */
async function upload(names: readonly string[], size = 2048): Promise<void> {
  for (const name of names) await putFile(join(producer, 'data'), name, bytesFor(name, size));
  const run = await runCli(['upload', '--url', server.url, ...names.map(pathOf)], { cwd: producer });
  expect(run.stderr).toContain(`${names.length} uploaded`);
  expect(run.code).toBe(0);
}

const sync = (args: readonly string[], url = server.url) =>
  runCli(['sync', '--url', url, ...args], { cwd: consumer, timeoutMs: 30_000 });
const downloads = () => requests.filter((entry) => entry.path.startsWith('/download'));
const fetchedPaths = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(join(consumer, 'data').length + 1))
    .sort();

beforeAll(async () => {
  assertBuilt();
  producer = await tempDir();
  consumer = await tempDir();
  server = await startServer({ log: (entry) => requests.push(entry) });
  await upload([scienceName('mag', 1), scienceName('mag', 2), scienceName('mag', 3), scienceName('swe', 1)]);
});

afterAll(async () => {
  await server?.stop();
  await cleanup(producer);
  await cleanup(consumer);
});

describe('sync', () => {
  it('fetches every match first, then nothing when nothing is new, without a /download request', async () => {
    const first = await sync(['--instrument', 'mag']);
    expect(first.stderr).toContain('Sync: 3 fetched; first run.');
    expect(first.code).toBe(0);
    expect(fetchedPaths(first.stdout)).toEqual([1, 2, 3].map((day) => pathOf(scienceName('mag', day))));

    requests = [];
    const second = await sync(['--instrument', 'mag']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('Sync: nothing new; asked for files ingested since');
    expect(downloads()).toEqual([]);
    const queries = requests.filter((entry) => entry.path.startsWith('/query'));
    expect(queries).toHaveLength(1);
    expect(queries[0]?.path).toMatch(/ingestion_start_date=\d{8}/);
    expect(queries[0]?.path).not.toContain('version=latest');
  });

  it('fetches exactly the new files and a new version; --prune removes only the superseded version', async () => {
    const old = scienceName('mag', 1);
    const newer = scienceName('mag', 1, 'l1a', 'v01-01');
    const added = scienceName('mag', 4);
    await upload([added, newer]);
    // A file put here by hand, an older version of a held file: never the tool's to remove.
    const byHand = scienceName('mag', 2, 'l1a', 'v00-09');
    await putFile(join(consumer, 'data'), byHand, 'by hand');

    requests = [];
    const run = await sync(['--instrument', 'mag']);
    expect(run.code).toBe(0);
    expect(fetchedPaths(run.stdout)).toEqual([pathOf(newer), pathOf(added)].sort());
    expect(
      downloads()
        .map((entry) => entry.path)
        .sort(),
    ).toEqual([`/download/${pathOf(newer)}`, `/download/${pathOf(added)}`].sort());
    expect(run.stderr).toContain('1 superseded version kept (--prune removes them)');

    const dry = await sync(['--instrument', 'mag', '--prune', '--dry-run']);
    expect(dry.code).toBe(0);
    // As `download --dry-run` says it: what would happen on stdout, then the counts, last.
    expect(dry.stdout).toBe(
      `would remove ${pathOf(old)} (superseded)\nSync: dry run: 0 to fetch, nothing fetched, 1 superseded version would be removed; asked for files ingested since ${dry.stdout.match(/since (\d{8})/)?.[1]}.\n`,
    );
    expect(dry.stderr).toBe('');
    const dryJson = await sync(['--instrument', 'mag', '--prune', '--dry-run', '--output-format', 'json']);
    expect(JSON.parse(dryJson.stdout)).toEqual([
      { file_path: pathOf(old), local_path: join(consumer, 'data', pathOf(old)), action: 'remove' },
    ]);
    expect(dryJson.stderr).toMatch(/^Sync: dry run: 0 to fetch/);
    expect(existsSync(join(consumer, 'data', pathOf(old)))).toBe(true);

    const pruned = await sync(['--instrument', 'mag', '--prune']);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toBe('');
    expect(pruned.stderr).toContain('1 superseded version removed');
    expect(await listFiles(join(consumer, 'data'))).toEqual(
      [byHand, newer, scienceName('mag', 2), scienceName('mag', 3), added].map(pathOf).sort(),
    );

    const refused = await sync(['--instrument', 'mag', '--prune', '--all-versions']);
    expect(refused.code).toBe(2);
  });

  it('a plain run fetches a held file deleted here again; --full lists what it considered as JSON', async () => {
    const gone = pathOf(scienceName('mag', 3));
    await rm(join(consumer, 'data', gone));
    const plain = await sync(['--instrument', 'mag']);
    expect(plain.code).toBe(0);
    expect(fetchedPaths(plain.stdout)).toEqual([gone]);
    await rm(join(consumer, 'data', gone));
    const run = await sync(['--instrument', 'mag', '--full', '--output-format', 'json']);
    expect(run.code).toBe(0);
    const records = JSON.parse(run.stdout) as Array<{
      file_path: string;
      local_path: string;
      status: string;
    }>;
    expect(records.map((record) => `${record.status} ${record.file_path}`).sort()).toEqual(
      [
        `downloaded ${gone}`,
        ...[scienceName('mag', 1, 'l1a', 'v01-01'), scienceName('mag', 2), scienceName('mag', 4)].map(
          (name) => `skipped ${pathOf(name)}`,
        ),
      ].sort(),
    );
    expect(records[0]?.local_path).toBe(join(consumer, 'data', records[0]?.file_path ?? ''));
  });

  describe.skipIf(SIGNALS.missing)(SIGNALS.title('two at once, and interrupted'), () => {
    const FILES = Array.from({ length: 12 }, (_, index) => scienceName('codice', index + 1, 'l1b'));
    let proxy: ShapingProxy;

    beforeAll(async () => {
      await upload(FILES, MIB / 2);
      // Every request to the service waits a while (on the backends, objects come straight from the bucket): the
      // first run is still going when the second starts and when the signal comes.
      proxy = await startShapingProxy(server.url, { rate: 2 * MIB, linkRate: 4 * MIB, delayMs: 400 });
    });
    afterAll(() => proxy?.stop());

    it('refuses a second run of the same set (75), and resumes an interrupted one without fetching again', {
      timeout: 30_000,
    }, async () => {
      const args = ['sync', '--url', proxy.url, '--instrument', 'codice', '--concurrency', '2'];
      const child = spawnCli(args, { cwd: consumer });
      const first = finished(child, 30_000);
      let landed = 0;
      child.stderr?.on('data', (chunk: Buffer) => {
        landed += (chunk.toString('utf8').match(/^downloaded /gm) ?? []).length;
      });
      expect(await waitFor(() => landed >= 2)).toBe(true);

      const second = await sync(['--instrument', 'codice'], proxy.url);
      expect(second.code).toBe(75);
      expect(second.stderr).toContain(
        `Another sync of this data root and filter set is running (process ${child.pid}`,
      );
      expect(second.stderr.trim().split('\n')[0]).toMatch(/^Error: /);

      child.kill('SIGINT');
      const interrupted = await first;
      expect(interrupted.code).toBe(130);
      const done = interrupted.stdout.split('\n').filter(Boolean).length;
      expect(done).toBeGreaterThanOrEqual(2);
      expect(done).toBeLessThan(FILES.length);

      requests = [];
      const resumed = await sync(['--instrument', 'codice'], proxy.url);
      expect(resumed.code).toBe(0);
      expect(fetchedPaths(resumed.stdout)).toHaveLength(FILES.length - done);
      expect(downloads()).toHaveLength(FILES.length - done);
      const held = (await listFiles(join(consumer, 'data'))).filter((path) => path.includes('/codice/'));
      expect(held).toEqual(FILES.map(pathOf).sort());
    });
  });

  it.skipIf(SIGNALS.missing)(
    SIGNALS.title('--watch picks up an upload, and stops on SIGINT with 130 and no part file'),
    {
      timeout: 20_000,
    },
    async () => {
      const child = spawnCli(['sync', '--url', server.url, '--instrument', 'hit', '--watch', '1s'], {
        cwd: consumer,
      });
      const run = finished(child, 20_000);
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      expect(await waitFor(() => stderr.includes('sync run 1: nothing new'))).toBe(true);
      const name = scienceName('hit', 7);
      await upload([name]);
      expect(await waitFor(() => existsSync(join(consumer, 'data', pathOf(name))))).toBe(true);
      expect(await waitFor(() => /sync run \d+: 1 fetched/.test(stderr))).toBe(true);
      // In a log, a line for the file and one for the run: no second summary.
      expect(stderr).toContain(`downloaded ${pathOf(name)}`);
      expect(stderr).not.toMatch(/\d+ downloaded;|Sync:/);
      child.kill('SIGINT');
      const ended = await run;
      expect(ended.code).toBe(130);
      expect(fetchedPaths(ended.stdout)).toEqual([pathOf(name)]);
      expect(
        (await listFiles(join(consumer, 'data'), { state: true })).filter(
          (path) => path.includes('/hit/') && path.includes('.part'),
        ),
      ).toEqual([]);
    },
  );
});
