/**
 * What `download` takes as the files to fetch, through the built command line: paths inside the data root
 * (relative or absolute), folders of the layout, globs (listed by one query of their fixed parts), a name the archive
 * does not hold, and `download -` reading paths from stdin in each form `query` prints them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  BIN,
  bytesFor,
  type CliRun,
  cleanEnv,
  cleanup,
  finished,
  listFiles,
  ON_BACKENDS,
  putFile,
  runCli,
  tempDir,
} from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';
import { screenText } from '../helpers/screen.js';

const SCRIPT = linuxOnly("util-linux's script");

let store: string;
let home: string;
let server: ReferenceServer;

const JAN = [
  'imap/mag/l2/2025/01/imap_mag_l2_norm_20250101_20250101_v01-00.cdf',
  'imap/mag/l2/2025/01/imap_mag_l2_norm_20250131_20250131_v01-00.cdf',
];
const FEB = 'imap/mag/l2/2025/02/imap_mag_l2_norm_20250201_20250201_v01-00.cdf';
const L1 = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250101_20250101_v01-00.cdf';

beforeAll(() => assertBuilt());
beforeEach(async () => {
  store = await tempDir('mission-store-');
  home = await tempDir();
  for (const path of [...JAN, FEB, L1]) await putFile(store, path, bytesFor(path, 1000));
  server = await startReferenceServer({
    store,
    port: 0,
    secret: 'download-targets-secret-0123456789',
  });
});
afterEach(async () => {
  await server.close();
  await cleanup(store);
  await cleanup(home);
});

const run = (args: string[]) =>
  runCli(['download', '--url', server.url, '--data-dir', 'data', ...args], { cwd: home });

describe.skipIf(ON_BACKENDS)('download targets', () => {
  it('maps a path inside the data root, relative or absolute, to its storage path', async () => {
    const relative = await run([`./data/${JAN[0]}`]);
    expect(relative.stderr).toContain('1 downloaded');
    expect(relative.code).toBe(0);
    const absolute = await run([`${home}/data/${JAN[1]}`]);
    expect(absolute.code).toBe(0);
    expect(await listFiles(`${home}/data`)).toEqual(JAN);
    const outside = await run(['/etc/passwd']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('is not inside the data root');
  });

  it('downloads what the archive holds below a folder of the layout', async () => {
    const month = await run(['imap/mag/l2/2025/01/']);
    expect(month.code).toBe(0);
    expect(month.stderr).toContain('2 downloaded');
    expect(await listFiles(`${home}/data`)).toEqual(JAN);
    const level = await run(['./data/imap/mag/l2']);
    expect(level.code).toBe(0);
    expect(await listFiles(`${home}/data`)).toEqual([...JAN, FEB]);
    const empty = await run(['imap/mag/l2/2024/01/']);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toContain('The archive holds no files below imap/mag/l2/2024/01/');
  });

  it('downloads the matches of a glob in a name or a layout path, asking one query of its fixed parts', async () => {
    const requests: string[] = [];
    await server.close();
    server = await startReferenceServer({
      store,
      port: 0,
      secret: 'download-targets-secret-0123456789',
      log: (entry) => requests.push(entry.path),
    });
    const dry = await run(['imap_mag_l2_norm_202501*', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      `${JAN.map((path) => `would download ${path}\n`).join('')}Dry run: 2 to download, 0 to check, 0 to skip (verified copies).\nNothing was fetched.\n`,
    );
    expect(requests).toEqual([
      expect.stringMatching(
        /^\/query\?instrument=mag&data_level=l2&descriptor=norm&start_date=20250101&end_date=20250131(&|$)/,
      ),
    ]);
    const byPath = await run(['imap/mag/l2/2025/0[12]/*_2025013?_*.cdf']);
    expect(byPath.code).toBe(0);
    expect(byPath.stderr).toContain('1 downloaded');
    expect(await listFiles(`${home}/data`)).toEqual([JAN[1]]);
    const inRoot = await run(['./data/imap/mag/*/2025/01/*norm_20250101*']);
    expect(inRoot.code).toBe(0);
    expect(await listFiles(`${home}/data`)).toEqual([L1, ...JAN].sort());
  });

  it('says truthfully when a glob matches nothing, and refuses one that names no instrument', async () => {
    const none = await run(['imap_mag_l2_norm_202601*']);
    expect(none.code).toBe(0);
    expect(none.stderr).toBe(
      'No file in the archive matches "imap_mag_l2_norm_202601*"; nothing to download.\n',
    );
    const broad = await run(['*.cdf']);
    expect(broad.code).toBe(2);
    expect(broad.stderr).toContain('"*.cdf" does not say which instrument');
    const help = await runCli(['download', '--help'], { cwd: home });
    expect(help.stdout).toContain("Quote it ('imap_mag_l2_norm_202501*') so the shell passes it");
  });

  it('says the archive holds no such file for a 404, not what the service says of full paths', async () => {
    const result = await run(['imap_mag_l2_norm_20250102_20250102_v01-00.cdf']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the archive holds no such file');
    expect(result.stderr).not.toContain('include the full path');
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

describe.skipIf(ON_BACKENDS)('download - (stdin)', () => {
  const query = async (format: string) =>
    (
      await runCli(['query', '--url', server.url, '--instrument', 'mag', '--output-format', format], {
        cwd: home,
      })
    ).stdout;

  it("reads query's CSV (its file_path column)", async () => {
    const result = await runCli(['download', '-', '--url', server.url, '--data-dir', 'data'], {
      cwd: home,
      input: await query('csv'),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n').sort()).toEqual(
      [...JAN, FEB, L1].map((path) => join(home, 'data', path)).sort(),
    );
  });

  it("refuses query's table in one line that suggests --output-format json", async () => {
    const result = await runCli(['download', '-', '--url', server.url, '--data-dir', 'data'], {
      cwd: home,
      input: await query('table'),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "Error: stdin holds query's table, not file paths: pipe `query --output-format json` (or csv) into `download -`.\n",
    );
  });

  it.runIf(HAS_SCRIPT && !SCRIPT.missing)(
    SCRIPT.title('on a terminal, says it is reading stdin'),
    async () => {
      const result = await runInTerminal(
        ['download', '-', '--url', server.url, '--data-dir', 'data'],
        home,
        JAN[0] as string,
      );
      const screen = screenText(result.stdout, 80);
      expect(screen[0]).toBe("Reading file paths from stdin (lines, or query's JSON or CSV); Ctrl-D ends.");
      expect(screen.every((line) => line.length <= 80)).toBe(true);
      expect(result.code).toBe(0);
      expect(await readdir(join(home, 'data', 'imap/mag/l2/2025/01'))).toEqual([JAN[0]?.split('/').at(-1)]);
    },
  );
});
