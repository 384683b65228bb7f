/**
 * What `download`, `upload` and the data root say (issue 28, "Everyday use, round three"): paths inside the data
 * root, folders of the layout and globs as download targets, a missing file's 404, upload failures' labels, a
 * data root that cannot be written, and a read-only mirror listed for `| xargs`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { mountTmpfs, unmount } from '../helpers/disk.js';
import {
  assertBuilt,
  BIN,
  bytesFor,
  cleanEnv,
  cleanup,
  finished,
  listFiles,
  ON_ENGINES,
  putFile,
  runCli,
  tempDir,
} from '../helpers/e2e.js';
import { screenText } from '../helpers/screen.js';

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
  server = await startReferenceServer({ store, port: 0, secret: 'round-three-secret-0123456789' });
});
afterEach(async () => {
  await server.close();
  await cleanup(store);
  await cleanup(home);
});

const run = (args: string[]) =>
  runCli(['download', '--url', server.url, '--data-dir', 'data', ...args], { cwd: home });

describe.skipIf(ON_ENGINES)('download targets', () => {
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

  it('refuses a glob in one line that suggests the filters', async () => {
    const result = await run(['imap_mag_l2_*']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('is a pattern');
    expect(result.stderr).toContain('--instrument mag --data-level l2');
  });

  it('says the archive holds no such file for a 404, not what the service says of full paths', async () => {
    const result = await run(['imap_mag_l2_norm_20250102_20250102_v01-00.cdf']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the archive holds no such file');
    expect(result.stderr).not.toContain('include the full path');
  });
});

describe.skipIf(ON_ENGINES)('upload failures', () => {
  it('are labelled by the upload, not by the GET that asks for its URL', async () => {
    await run([JAN[0] as string]);
    const closed = await startReferenceServer({
      store,
      port: 0,
      secret: 'round-three-secret-0123456789',
      apiKeys: ['right-key'],
    });
    try {
      const result = await runCli(['upload', '--url', closed.url, `data/${JAN[0]}`], { cwd: home });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${JAN[0]}: upload ${JAN[0]}: 401 `);
      expect(result.stderr).not.toMatch(/GET \S+\/upload\//);
    } finally {
      await closed.close();
    }
  });
});

describe.skipIf(ON_ENGINES)('a data root that cannot be made', () => {
  it('says a data root that is a file is a file, not EEXIST', async () => {
    await writeFile(`${home}/afile`, 'x');
    const file = await runCli(['download', '--url', server.url, '--data-dir', 'afile', JAN[0] as string], {
      cwd: home,
    });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain(`The data root ${home}/afile is a file, not a folder.`);
    const below = await runCli(
      ['download', '--url', server.url, '--data-dir', 'afile/sub', JAN[0] as string],
      {
        cwd: home,
      },
    );
    expect(below.stderr).toContain(
      `Cannot make the data root ${home}/afile/sub: ${home}/afile is a file, not a folder.`,
    );
    expect(file.stderr + below.stderr).not.toMatch(/EEXIST|ENOTDIR|mkdir/);
  });

  const mounted = mountTmpfs('4m');
  if (mounted) unmount(mounted);
  it.runIf(mounted !== undefined)(
    'says a data root below a read-only mount is read-only, not ENOENT',
    async () => {
      const folder = mountTmpfs('4m') as string;
      try {
        execFileSync('mount', ['-o', 'remount,ro', folder]);
        const result = await run(['--data-dir', `${folder}/sub/deeper`, JAN[0] as string]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(
          `Cannot write in the data root ${folder}/sub/deeper: the file system is read-only (EROFS).`,
        );
        expect(result.stderr).not.toContain('ENOENT');
      } finally {
        unmount(folder);
      }
    },
  );
});

describe.skipIf(ON_ENGINES)('a read-only mirror', () => {
  const mounted = mountTmpfs('4m');
  if (mounted) unmount(mounted);
  it.runIf(mounted !== undefined)(
    'lists its verified files on stdout and exits 0; a missing one still fails',
    async () => {
      const folder = mountTmpfs('4m') as string;
      try {
        const first = await run(['--data-dir', folder, ...JAN]);
        expect(first.code).toBe(0);
        execFileSync('mount', ['-o', 'remount,ro', folder]);
        const again = await run(['--data-dir', folder, ...JAN]);
        expect(again.code).toBe(0);
        expect(again.stdout).toBe(JAN.map((path) => `${folder}/${path}\n`).join(''));
        expect(again.stderr).toContain('2 skipped (verified)');
        const folderRun = await run(['--data-dir', folder, 'imap/mag/l2/2025/01/']);
        expect(folderRun.code).toBe(0);
        expect(folderRun.stdout.trim().split('\n')).toHaveLength(2);
        const missing = await run(['--data-dir', folder, FEB]);
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('the file system is read-only (EROFS)');
      } finally {
        unmount(folder);
      }
    },
  );
});

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');

describe.skipIf(ON_ENGINES)('the coverage calendar on a narrow terminal', () => {
  it.runIf(HAS_SCRIPT).each([80, 60, 50])('fits %i columns without a wrapped row', async (columns) => {
    const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
    const args = [
      'coverage',
      '--url',
      server.url,
      '--data-dir',
      'data',
      '--instrument',
      'mag',
      '--data-level',
      'l2',
    ];
    const command = `stty cols ${columns} rows 50; exec ${[process.execPath, BIN, ...args, '--start-date', '20250101', '--end-date', '20250228'].map(quote).join(' ')}`;
    // The server answers from this process: the run is awaited, never waited for synchronously.
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: home,
      env: cleanEnv(home, { TERM: 'xterm' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end();
    const run = await finished(child, 30_000);
    expect(run.code).toBe(0);
    const screen = screenText(run.stdout, columns);
    for (const line of screen) expect(line.length).toBeLessThanOrEqual(columns);
    const january = screen.find((line) => line.startsWith('2025-01'));
    const february = screen.find((line) => line.startsWith('2025-02'));
    // A row per month, each ending with its count (a wrapped row would leave the count on a line of its own).
    expect(january).toMatch(/ \d+\/31$/);
    expect(february).toMatch(/ \d+\/28$/);
    expect(screen.filter((line) => /^\s*\d+\/\d+$/.test(line))).toEqual([]);
  });
});
