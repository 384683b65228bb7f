/**
 * What `download` reports through the built command line: the local path of each file on stdout (or a JSON
 * record per file) and only the counts on stderr, one line when stdin held nothing, how much of a resumed file
 * this run fetched, one verified file told as one, and after Ctrl-C the counts of the files done, failed and not
 * started. (The points are those of issue 19.)
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
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
import { unixOnly } from '../helpers/platform.js';

const SIGNALS = unixOnly('SIGINT');

const MIB = 1024 * 1024;

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

describe.skipIf(SIGNALS.missing)(SIGNALS.title('Ctrl-C in the middle of a batch (point 4)'), () => {
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

describe.skipIf(ON_BACKENDS)('a resumed download', () => {
  let own: string;
  const servers: ReferenceServer[] = [];
  beforeEach(async () => {
    own = await tempDir('mission-store-');
  });
  afterEach(async () => {
    for (const started of servers.splice(0)) await started.close();
    await cleanup(own);
  });
  async function serve(
    faults: Parameters<typeof startReferenceServer>[0]['faults'] = {},
  ): Promise<ReferenceServer> {
    const started = await startReferenceServer({
      store: own,
      port: 0,
      secret: 'download-output-secret-0123456789',
      faults,
    });
    servers.push(started);
    return started;
  }

  it('says it resumed, and how much of the file this run fetched', async () => {
    const name = scienceName('swe', 3);
    const path = `imap/swe/l1a/2024/01/${name}`;
    await putFile(own, path, bytesFor(name, 8 * MIB));
    const other = scienceName('swe', 4);
    await putFile(own, `imap/swe/l1a/2024/01/${other}`, bytesFor(other, MIB));
    const args = (url: string) => [
      'download',
      path,
      '--url',
      url,
      '--data-dir',
      'data',
      '--connections',
      '1',
    ];
    const first = await serve({ outage: { afterBytes: 3 * MIB, forMs: 60_000 } });
    const cut = await runCli([...args(first.url), '--retries', '0'], { cwd: home, timeoutMs: 30_000 });
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain('the next run resumes from them');

    const second = await serve();
    const again = await runCli(args(second.url), { cwd: home, timeoutMs: 30_000 });
    expect(again.code, again.stderr).toBe(0);
    const line = again.stderr.split('\n').find((text) => text.startsWith('downloaded ')) ?? '';
    expect(line).toMatch(
      new RegExp(`^downloaded ${path} \\(resumed: \\d+\\.\\d MiB of 8\\.0 MiB fetched\\)$`),
    );
    const fetched = Number(/resumed: ([\d.]+) MiB/.exec(line)?.[1]);
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThan(8);
    expect(await readdir(join(home, 'data', 'imap/swe/l1a/2024/01'))).toEqual([name]);

    // A file fetched whole says its size alone.
    const whole = await runCli(['download', other, '--url', second.url, '--data-dir', 'data'], {
      cwd: home,
    });
    expect(whole.stderr).toContain(`downloaded imap/swe/l1a/2024/01/${other} (1.0 MiB)\n`);
  });
});

describe('one file verified', () => {
  it('is not "All 1"', async () => {
    const run = await cli(['download', pathOf(FILES[0] as string)]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("\nThe file was verified against the store's checksum.\n");
    expect(run.stderr).not.toContain('All 1');
  });
});
