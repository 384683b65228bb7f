/**
 * Everyday use through the built command line (issue 19): hints for refused credentials, quiet no-ops,
 * reversed date ranges, results on stdout, honest counts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
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
