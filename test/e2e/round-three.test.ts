/**
 * What the built command line says (issue 28, "Everyday use, round three"): a resumed download, a full disk,
 * `status`'s records and exit, `download -` from each form of `query`, grammar, filter hints, and the options
 * every client command shares.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { twoSizes } from '../../src/download/local-root.js';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { mountTmpfs, unmount } from '../helpers/disk.js';
import {
  assertBuilt,
  BIN,
  bytesFor,
  type CliRun,
  cleanEnv,
  cleanup,
  finished,
  ON_ENGINES,
  putFile,
  runCli,
  scienceName,
  tempDir,
} from '../helpers/e2e.js';
import { screenText } from '../helpers/screen.js';

const MIB = 1024 * 1024;

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

async function serve(
  faults: Parameters<typeof startReferenceServer>[0]['faults'] = {},
): Promise<ReferenceServer> {
  const server = await startReferenceServer({
    store,
    port: 0,
    secret: 'round-three-secret-0123456789',
    faults,
  });
  servers.push(server);
  return server;
}

describe.skipIf(ON_ENGINES)('a resumed download', () => {
  it('says it resumed, and how much of the file this run fetched', async () => {
    const name = scienceName('swe', 3);
    const path = `imap/swe/l1a/2024/01/${name}`;
    await putFile(store, path, bytesFor(name, 8 * MIB));
    const other = scienceName('swe', 4);
    await putFile(store, `imap/swe/l1a/2024/01/${other}`, bytesFor(other, MIB));
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

    const again = await runCli(args((await serve()).url), { cwd: home, timeoutMs: 30_000 });
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
    const whole = await runCli(['download', other, '--url', servers[1]?.url ?? '', '--data-dir', 'data'], {
      cwd: home,
    });
    expect(whole.stderr).toContain(`downloaded imap/swe/l1a/2024/01/${other} (1.0 MiB)\n`);
  });
});

describe('a full disk', () => {
  it('counts only the bytes kept in part files, and says nothing is kept when none is', async () => {
    const mount = mountTmpfs('4m');
    if (mount === undefined) return;
    try {
      const names = Array.from({ length: 10 }, (_, day) => scienceName('swe', day + 1));
      for (const name of names) await putFile(store, `imap/swe/l1a/2024/01/${name}`, bytesFor(name, 900_000));
      const server = await serve();
      const data = join(mount, 'data');
      const run = await runCli(['download', '--url', server.url, '--instrument', 'swe', '--data-dir', data], {
        cwd: home,
        timeoutMs: 30_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('the disk is full (ENOSPC)');
      expect(run.stderr).toMatch(/^\d downloaded, \d failed; /m);
      const left = await readdir(join(data, 'imap/swe/l1a/2024/01'));
      expect(left.filter((entry) => entry.includes('.part'))).toEqual([]);
      expect(run.stderr).not.toContain('of unfinished files kept');
    } finally {
      unmount(mount);
    }
  });

  it('compares sizes in the units of formatBytes, exactly when they would round alike', () => {
    expect(twoSizes(2 * 1024 * MIB, 3 * MIB)).toEqual(['2.0 GiB', '3.0 MiB']);
    expect(twoSizes(MIB + 40_000, MIB + 2000)).toEqual(['1,088,576 bytes', '1,050,576 bytes']);
  });
});

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');

/** Runs the built command line on a pseudo-terminal 80 columns wide, typing `typed` into it once it started. */
function runInTerminal(args: readonly string[], cwd: string, typed: string): Promise<CliRun> {
  const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
  const command = `stty cols 80 rows 50; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd,
    env: cleanEnv(cwd, { TERM: 'xterm' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let said = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    said += chunk.toString();
    // Typed once the command says it reads: a line, then Ctrl-D (end of input on a terminal).
    if (said.includes('Ctrl-D') && typed !== '') {
      child.stdin?.write(`${typed}\n\u0004`);
      typed = '';
    }
  });
  return finished(child, 30_000);
}

describe.skipIf(ON_ENGINES)('download - (stdin)', () => {
  const names = [scienceName('mag', 1), scienceName('mag', 2)];
  const paths = names.map((name) => `imap/mag/l1a/2024/01/${name}`);
  let url: string;
  beforeEach(async () => {
    for (const [index, path] of paths.entries()) await putFile(store, path, bytesFor(path, 1000 + index));
    url = (await serve()).url;
  });
  const query = async (format: string) =>
    (await runCli(['query', '--url', url, '--instrument', 'mag', '--output-format', format], { cwd: home }))
      .stdout;

  it("reads query's CSV (its file_path column)", async () => {
    const run = await runCli(['download', '-', '--url', url, '--data-dir', 'data'], {
      cwd: home,
      input: await query('csv'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').sort()).toEqual(paths.map((path) => join(home, 'data', path)));
  });

  it("refuses query's table in one line that suggests --output-format json", async () => {
    const run = await runCli(['download', '-', '--url', url, '--data-dir', 'data'], {
      cwd: home,
      input: await query('table'),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "Error: stdin holds query's table, not file paths: pipe `query --output-format json` (or csv) into `download -`.\n",
    );
  });

  it.runIf(HAS_SCRIPT)('on a terminal, says it is reading stdin', async () => {
    const run = await runInTerminal(
      ['download', '-', '--url', url, '--data-dir', 'data'],
      home,
      paths[0] as string,
    );
    const screen = screenText(run.stdout, 80);
    expect(screen[0]).toBe("Reading file paths from stdin (lines, or query's JSON or CSV); Ctrl-D ends.");
    expect(screen.every((line) => line.length <= 80)).toBe(true);
    expect(run.code).toBe(0);
    expect(await readdir(join(home, 'data', 'imap/mag/l1a/2024/01'))).toEqual([names[0]]);
  });
});

describe.skipIf(ON_ENGINES)('grammar and empty files', () => {
  it('one file verified is not "All 1"', async () => {
    const name = scienceName('mag', 5);
    await putFile(store, `imap/mag/l1a/2024/01/${name}`, bytesFor(name, 2000));
    const server = await serve();
    const run = await runCli(['download', name, '--url', server.url, '--data-dir', 'data'], { cwd: home });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("\nThe file was verified against the store's checksum.\n");
    expect(run.stderr).not.toContain('All 1');
  });

  it.each([[[]], [['--no-checksum']]])('uploads a 0-byte science file with a warning (%j)', async (extra) => {
    const server = await serve();
    const name = scienceName('mag', 6);
    const folder = join(home, 'data', 'imap/mag/l1a/2024/01');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, name), '');
    const run = await runCli(['upload', name, '--url', server.url, '--data-dir', 'data', ...extra], {
      cwd: home,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `Warning: ${join(folder, name)} is empty (0 bytes); uploading it as it is.\n`,
    );
    expect(run.stderr).toContain('1 uploaded');
    // The same empty file again: already stored, with the same (no) bytes.
    const again = await runCli(['upload', name, '--url', server.url, '--data-dir', 'data', ...extra], {
      cwd: home,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('1 already stored (same bytes)');
  });
});

describe.skipIf(ON_ENGINES)('filters', () => {
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

  it('--instrument hi suggests the hi family with hit, sorted', async () => {
    const run = await cli('query', '--instrument', 'hi');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Did you mean hi-45, hi-90 or hit?');
  });
});

describe.skipIf(ON_ENGINES)('options shared by the client commands', () => {
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
