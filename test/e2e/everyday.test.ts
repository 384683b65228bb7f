/**
 * Everyday use through the built command line (issue 19): hints for refused credentials, quiet no-ops,
 * reversed date ranges, results on stdout, honest counts.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

let server: TestServer;
let home: string;
let store: string;
const FILES = [scienceName('mag', 1), scienceName('mag', 2), scienceName('mag', 3)];
const pathOf = (name: string) => `imap/mag/l1a/2024/01/${name}`;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  for (const name of FILES) await putFile(store, name, bytesFor(name, 3000));
  server = await startServer({ storeDir: store, apiKeys: ['right-key'] });
});
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
});
beforeEach(async () => {
  home = await tempDir();
});
afterEach(async () => {
  await cleanup(home);
});

const cli = (args: string[], input?: string) =>
  runCli([...args, '--url', server.url], {
    cwd: home,
    timeoutMs: 30_000,
    ...(input === undefined ? {} : { input }),
  });

describe('refused credentials (point 1)', () => {
  it.each([
    [['query', '--api-key', 'wrong', '--instrument', 'mag'], /--api-key, set MISSION_API_KEY/],
    [['download', '--api-key', 'wrong', '--instrument', 'mag'], /--api-key, set MISSION_API_KEY/],
    [['query', '--token', 'wrong', '--instrument', 'mag'], /--token, set MISSION_ACCESS_TOKEN/],
  ])('%j says the credential is not valid and how to set it', async (args, advice) => {
    const run = await cli(args);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/pre-signed URL/);
    expect(run.stderr).toMatch(/Hint: The (API key|bearer token) is not valid for this service/);
    expect(run.stderr).toMatch(advice);
  });
});

describe('nothing to do (point 2)', () => {
  it.each([['[]'], [''], ['\n\n']])(
    'download - with stdin %j exits 0 with one line on stderr',
    async (input) => {
      const run = await cli(['download', '-'], input);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toEqual(['Nothing to download: stdin held no file paths.']);
    },
  );

  it('a query that finds nothing, piped into download, exits 0', async () => {
    const found = await cli(['query', '--instrument', 'swe', '--output-format', 'json']);
    expect(found.code).toBe(0);
    const run = await cli(['download', '-'], found.stdout);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^Nothing to download/);
  });
});

describe('reversed date ranges (point 9)', () => {
  it.each([
    [
      ['query', '--start-date', '20250301', '--end-date', '20250101'],
      'start_date 20250301',
      'end_date 20250101',
    ],
    [
      ['download', '--ingestion-start-date', '20250301', '--ingestion-end-date', '20250101'],
      'ingestion_start_date 20250301',
      'ingestion_end_date 20250101',
    ],
  ])('%j is a usage error naming both dates', async (args, first, second) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(first);
    expect(run.stderr).toContain(second);
  });

  it('the same day at both ends is a valid range', async () => {
    const run = await cli([
      'query',
      '--start-date',
      '20240102',
      '--end-date',
      '20240102',
      '--output-format',
      'json',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveLength(1);
  });
});

describe('download results on stdout (points 3 and 10)', () => {
  it('prints the local path of each file fetched or verified, one per line; a re-run lists none on stderr', async () => {
    const first = await cli(['download', '--instrument', 'mag']);
    expect(first.code).toBe(0);
    const expected = FILES.map((name) => join(home, 'data', pathOf(name))).sort();
    expect(first.stdout.trim().split('\n').sort()).toEqual(expected);
    const again = await cli(['download', '--instrument', 'mag']);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n').sort()).toEqual(expected);
    // Nothing per unchanged file on stderr: only the counts.
    expect(again.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^3 skipped \(verified\); 0 B in /),
    ]);
    const verbose = await cli(['download', '--instrument', 'mag', '--verbose']);
    expect(verbose.stderr).toContain(`skipped (verified) ${pathOf(FILES[0] as string)}`);
  });

  it('--output-format json prints one record per file', async () => {
    const run = await cli(['download', '--output-format', 'json', pathOf(FILES[0] as string)]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      {
        file_path: pathOf(FILES[0] as string),
        local_path: join(home, 'data', pathOf(FILES[0] as string)),
        status: 'downloaded',
        bytes: 3000,
        verified: true,
        // The folder server states a CRC-32 of the body; a bucket its MD5, as the ETag.
        checksum: ON_BACKENDS ? 'md5' : 'crc32',
      },
    ]);
  });

  it('refuses an unknown --output-format', async () => {
    const run = await cli(['download', '--output-format', 'xml', pathOf(FILES[0] as string)]);
    expect(run.code).toBe(2);
  });
});

describe('Ctrl-C in the middle of a batch (point 4)', () => {
  it('counts done, failed and not started, with no line per file not started', async () => {
    const many = await tempDir('mission-store-');
    const names = Array.from({ length: 300 }, (_, index) => scienceName('lo', index + 1, 'l1b'));
    for (const name of names) await putFile(many, name, bytesFor(name, 20_000));
    const big = await startServer({ storeDir: many });
    try {
      const child = spawnCli(['download', '--url', big.url, '--instrument', 'lo', '--concurrency', '1'], {
        cwd: home,
      });
      const done = finished(child, 60_000);
      expect(await waitFor(async () => (await listFiles(join(home, 'data'))).length >= 5, 30_000)).toBe(true);
      child.kill('SIGINT');
      const run = await done;
      expect(run.code).toBe(130);
      // Only a file in flight (one at a time here) may be told as cut short; none per file not started.
      expect((run.stderr.match(/^failed .*Cancelled/gm) ?? []).length).toBeLessThanOrEqual(1);
      const summary = run.stderr.split('\n').find((line) => line.includes('not started')) ?? '';
      const count = (word: string) =>
        Number((summary.match(new RegExp(`([\\d,]+) ${word}`))?.[1] ?? '0').replace(',', ''));
      expect(count('downloaded')).toBeGreaterThanOrEqual(1);
      expect(count('downloaded') + count('failed') + count('not started')).toBe(300);
      expect(count('not started')).toBeGreaterThan(0);
      expect(run.stderr).toContain('Interrupted; run the same command again to resume.');
      // What was fetched is on stdout: the files in place, nothing else.
      expect(run.stdout.trim().split('\n')).toHaveLength(count('downloaded'));
    } finally {
      await big.stop();
      await cleanup(many);
    }
  });
});
