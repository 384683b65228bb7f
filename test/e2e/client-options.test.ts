/**
 * The options of the client commands as the built command line takes and refuses them: the options every
 * client command shares, before or after the command; filters (case hints, did-you-mean, a filter given twice);
 * a reversed date range; and a credential the service refuses, with how to set a valid one. (The points are
 * those of issue 19.)
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
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

let store: string;
let home: string;
const servers: ReferenceServer[] = [];

beforeAll(() => assertBuilt());
beforeEach(async () => {
  store = await tempDir('mission-store-');
  home = await tempDir();
});
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  await cleanup(store);
  await cleanup(home);
});

async function serve(): Promise<ReferenceServer> {
  const server = await startReferenceServer({
    store,
    port: 0,
    secret: 'client-options-secret-0123456789',
  });
  servers.push(server);
  return server;
}

describe.skipIf(ON_BACKENDS)('filters', () => {
  let url: string;
  beforeEach(async () => {
    const name = scienceName('mag', 7);
    await putFile(store, `imap/mag/l1a/2024/01/${name}`, bytesFor(name, 100));
    url = (await serve()).url;
  });
  const cli = (...args: string[]) => runCli([...args, '--url', url], { cwd: home });

  it('--descriptor NORM, which matches nothing, gets a case hint from query and download', async () => {
    const query = await cli('query', '--instrument', 'mag', '--descriptor', 'TEST');
    expect(query.code).toBe(0);
    expect(query.stderr).toBe(
      'Found [0] matching files\nHint: Descriptors are written in lower case in file names: did you mean --descriptor test?\n',
    );
    const download = await cli(
      'download',
      '--instrument',
      'mag',
      '--descriptor',
      'TEST',
      '--data-dir',
      'data',
    );
    expect(download.stderr).toContain('did you mean --descriptor test?');
    expect((await cli('query', '--instrument', 'mag', '--descriptor', 'nothing')).stderr).not.toContain(
      'Hint',
    );
  });

  it('--version LATEST gets a case hint, as MAG does', async () => {
    const run = await cli('query', '--instrument', 'mag', '--version', 'LATEST');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Versions are written in lower case: did you mean latest?');
  });

  it('a filter given twice with two values is refused; the same value twice is not', async () => {
    const twice = await cli('query', '--instrument', 'mag', '--instrument', 'swe');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--instrument is given twice (mag, then swe): a filter takes one value');
    expect((await cli('query', '--instrument', 'mag', '--instrument', 'mag')).code).toBe(0);
  });

  it('--instrument hi-60 suggests the closest instrument of either generation', async () => {
    const run = await cli('query', '--instrument', 'hi-60');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Did you mean hi-90?');
    expect((await cli('query', '--instrument', 'hj')).stderr).toContain('Did you mean hi?');
  });

  it('--instrument hi, a word of the archive of today, is taken', async () => {
    const run = await cli('query', '--instrument', 'hi', '--data-level', 'l3a');
    expect(run.stderr).toContain('Found [0] matching files');
    expect(run.code).toBe(0);
  });
});

describe.skipIf(ON_BACKENDS)('options shared by the client commands', () => {
  let url: string;
  const name = scienceName('mag', 8);
  beforeEach(async () => {
    await putFile(store, `imap/mag/l1a/2024/01/${name}`, bytesFor(name, 100));
    url = (await serve()).url;
  });

  it('are taken before the command as after it', async () => {
    const query = await runCli(['--url', url, 'query', '--instrument', 'mag', '--output-format', 'json'], {
      cwd: home,
    });
    expect(query.code, query.stderr).toBe(0);
    expect(JSON.parse(query.stdout)).toHaveLength(1);
    const download = await runCli(['--url', url, '--data-dir', 'before', '--quiet', 'download', name], {
      cwd: home,
    });
    expect(download.code, download.stderr).toBe(0);
    expect(download.stderr).toBe('');
    expect(download.stdout).toBe(`${join(home, 'before', 'imap/mag/l1a/2024/01', name)}\n`);
    const config = await runCli(['--url', url, 'config', 'get', 'url'], { cwd: home });
    expect(config.stdout).toBe(`${url}\n`);
  });

  it('after the command, win over the same option before it', async () => {
    const run = await runCli(['--url', 'http://127.0.0.1:9', 'query', '--url', url, '--instrument', 'mag'], {
      cwd: home,
    });
    expect(run.code, run.stderr).toBe(0);
  });

  it('are refused before a command they do not act on, as after it', async () => {
    const run = await runCli(['--url', url, '--data-dir', 'x', 'query', '--instrument', 'mag'], {
      cwd: home,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Error: --data-dir does not apply to query.');
    expect((await runCli(['--url', url, 'serve'], { cwd: home })).stderr).toContain(
      '--url does not apply to serve.',
    );
  });
});

describe('on a service that takes API keys', () => {
  const FILES = [scienceName('mag', 1), scienceName('mag', 2), scienceName('mag', 3)];
  let server: TestServer;
  let keyed: string;

  beforeAll(async () => {
    keyed = await tempDir('mission-store-');
    for (const name of FILES) await putFile(keyed, name, bytesFor(name, 3000));
    server = await startServer({ storeDir: keyed, apiKeys: ['right-key'] });
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup(keyed);
  });

  const cli = (args: string[]) => runCli([...args, '--url', server.url], { cwd: home, timeoutMs: 30_000 });

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
});
