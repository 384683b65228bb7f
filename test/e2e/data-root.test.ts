/**
 * The data root as the disk under it has it, through the built command line: a file where the root should be, a
 * read-only mount, a read-only mirror whose verified files are still listed for `| xargs`, and a disk that fills
 * during a batch.
 */
import { execFileSync } from 'node:child_process';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { twoSizes } from '../../src/data-root/safe-writes.js';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { mountTmpfs, unmount } from '../helpers/disk.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  tempDir,
} from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';

const TMPFS = linuxOnly('tmpfs');

const MIB = 1024 * 1024;
const SECRET = 'data-root-secret-0123456789';

let store: string;
let home: string;
let server: ReferenceServer;

const JAN = [
  'imap/mag/l2/2025/01/imap_mag_l2_norm_20250101_20250101_v01-00.cdf',
  'imap/mag/l2/2025/01/imap_mag_l2_norm_20250131_20250131_v01-00.cdf',
];
const FEB = 'imap/mag/l2/2025/02/imap_mag_l2_norm_20250201_20250201_v01-00.cdf';

beforeAll(() => assertBuilt());
beforeEach(async () => {
  store = await tempDir('mission-store-');
  home = await tempDir();
  for (const path of [...JAN, FEB]) await putFile(store, path, bytesFor(path, 1000));
  server = await startReferenceServer({ store, port: 0, secret: SECRET });
});
afterEach(async () => {
  await server.close();
  await cleanup(store);
  await cleanup(home);
});

/**
 * The summary's counts line as a download's JSON records make it: each status counted (a file not started apart
 * from the failed ones), in the summary's order, `total` files in all.
 */
function summaryOf(records: ReadonlyArray<{ status: string }>, total: number): RegExp {
  expect(records).toHaveLength(total);
  const count = (status: string) => records.filter((record) => record.status === status).length;
  const parts = [
    [count('downloaded'), 'downloaded'],
    [count('failed'), 'failed'],
    [count('not-started'), 'not started'],
  ].filter(([counted]) => (counted as number) > 0);
  expect(count('downloaded') + count('failed') + count('not-started')).toBe(total);
  return new RegExp(`^${parts.map(([counted, word]) => `${counted} ${word}`).join(', ')}; `, 'm');
}

const run = (args: string[]) =>
  runCli(['download', '--url', server.url, '--data-dir', 'data', ...args], { cwd: home });

describe.skipIf(ON_BACKENDS)('a data root that cannot be made', () => {
  it('says a data root that is a file is a file, not EEXIST', async () => {
    await writeFile(`${home}/afile`, 'x');
    const file = await runCli(['download', '--url', server.url, '--data-dir', 'afile', JAN[0] as string], {
      cwd: home,
    });
    expect(file.code).toBe(2);
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

  it('sync says a data root that is a file, or below one, as download says it', async () => {
    await writeFile(`${home}/afile`, 'x');
    for (const [root, message] of [
      ['afile', `Error: The data root ${home}/afile is a file, not a folder.`],
      [
        'afile/sub',
        `Error: Cannot make the data root ${home}/afile/sub: ${home}/afile is a file, not a folder.`,
      ],
    ] as const) {
      const result = await runCli(['sync', '--url', server.url, '--data-dir', root, '--instrument', 'mag'], {
        cwd: home,
      });
      expect(result.code).toBe(2);
      expect(result.stderr.split('\n')[0]).toBe(message);
      expect(result.stderr).toContain('Hint: Choose a folder as the data root');
      expect(result.stderr).not.toMatch(/a bug|EEXIST|ENOTDIR|mkdir/);
    }
  });

  const mounted = mountTmpfs('4m');
  if (mounted) unmount(mounted);
  it.runIf(mounted !== undefined && !TMPFS.missing)(
    TMPFS.title('says a data root below a read-only mount is read-only, not ENOENT'),
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
        for (const root of [folder, `${folder}/sub`]) {
          const synced = await runCli(
            ['sync', '--url', server.url, '--data-dir', root, '--instrument', 'mag'],
            { cwd: home },
          );
          expect(synced.code).toBe(1);
          expect(synced.stderr.split('\n')[0]).toBe(
            `Error: Cannot write in the data root ${root}: the file system is read-only (EROFS).`,
          );
          expect(synced.stderr).not.toMatch(/a bug|ENOENT/);
        }
      } finally {
        unmount(folder);
      }
    },
  );
});

describe.skipIf(ON_BACKENDS)('a read-only mirror', () => {
  const mounted = mountTmpfs('4m');
  if (mounted) unmount(mounted);
  it.runIf(mounted !== undefined && !TMPFS.missing)(
    TMPFS.title('lists its verified files on stdout and exits 0; a missing one still fails'),
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

describe('a full disk', () => {
  it.skipIf(TMPFS.missing)(
    TMPFS.title('counts only the bytes kept in part files, and says nothing is kept when none is'),
    async () => {
      const mount = mountTmpfs('4m');
      if (mount === undefined) return;
      const sweStore = await tempDir('mission-store-');
      let sweServer: ReferenceServer | undefined;
      try {
        const names = Array.from({ length: 10 }, (_, day) => scienceName('swe', day + 1));
        for (const name of names) {
          await putFile(sweStore, `imap/swe/l1a/2024/01/${name}`, bytesFor(name, 900_000));
        }
        // One more that is refused before its bytes come (larger than the whole disk): another failure, one hint.
        const large = scienceName('swe', 20);
        await putFile(sweStore, `imap/swe/l1a/2024/01/${large}`, bytesFor(large, 6_000_000));
        sweServer = await startReferenceServer({ store: sweStore, port: 0, secret: SECRET });
        const data = join(mount, 'data');
        const result = await runCli(
          [
            'download',
            '--url',
            sweServer.url,
            '--instrument',
            'swe',
            '--data-dir',
            data,
            '--output-format',
            'json',
          ],
          { cwd: home, timeoutMs: 30_000 },
        );
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('the disk is full (ENOSPC)');
        // How many files were in flight when the disk filled varies with the run; the summary counts each file
        // as its record says: a file never begun is not started, never one more failure.
        expect(result.stderr).toMatch(summaryOf(JSON.parse(result.stdout), 11));
        // The disk's two ways of saying it is full share one hint, printed once.
        expect(result.stderr.match(/^Hint: /gm)).toHaveLength(1);
        expect(result.stderr).toContain(
          'Hint: Free some space, or choose a data root on another disk: pass --data-dir',
        );
        // A file whose bytes were on disk when it filled may keep its part for the next run (which of them does
        // varies with the run): what is kept is what the summary says, and nothing is said when nothing is.
        const folder = join(data, 'imap/swe/l1a/2024/01');
        const left = await readdir(folder);
        expect(left.filter((entry) => entry.endsWith('.tmp'))).toEqual([]);
        const parts = left.filter((entry) => /\.part\.\d+$/.test(entry));
        let kept = 0;
        for (const part of parts) kept += (await stat(join(folder, part))).size;
        if (kept === 0) expect(result.stderr).not.toContain('of unfinished files kept');
        else
          expect(result.stderr).toMatch(
            /^[\d.]+ [KM]i?B of unfinished files kept; the next run resumes them\.$/m,
          );
      } finally {
        await sweServer?.close();
        await cleanup(sweStore);
        unmount(mount);
      }
    },
  );

  it.skipIf(TMPFS.missing)(
    TMPFS.title(
      'one file at a time: the file the disk filled under fails, the files not begun are not started',
    ),
    async () => {
      const mount = mountTmpfs('4m');
      if (mount === undefined) return;
      const sweStore = await tempDir('mission-store-');
      let sweServer: ReferenceServer | undefined;
      try {
        const names = Array.from({ length: 10 }, (_, day) => scienceName('swe', day + 1));
        for (const name of names) {
          await putFile(sweStore, `imap/swe/l1a/2024/01/${name}`, bytesFor(name, 900_000));
        }
        sweServer = await startReferenceServer({ store: sweStore, port: 0, secret: SECRET });
        const data = join(mount, 'data');
        const result = await runCli(
          [
            'download',
            '--url',
            sweServer.url,
            '--instrument',
            'swe',
            '--data-dir',
            data,
            '--concurrency',
            '1',
            '--output-format',
            'json',
          ],
          { cwd: home, timeoutMs: 30_000 },
        );
        expect(result.code).toBe(1);
        const records: Array<{ status: string }> = JSON.parse(result.stdout);
        // Four files of 900,000 bytes fill most of 4 MiB; the fifth fails as the disk fills under it, and the
        // batch stops: none of the five after it is begun, so none of them is counted as failed.
        const statuses = records.map((record) => record.status);
        expect(statuses).toEqual([
          ...Array.from({ length: 4 }, () => 'downloaded'),
          'failed',
          ...Array.from({ length: 5 }, () => 'not-started'),
        ]);
        expect(result.stderr).toMatch(/^4 downloaded, 1 failed, 5 not started; /m);
        expect(result.stderr).toMatch(/^Stopped: 5 files not started, as .+\.$/m);
        expect(result.stderr.match(/^failed /gm)).toHaveLength(1);
      } finally {
        await sweServer?.close();
        await cleanup(sweStore);
        unmount(mount);
      }
    },
  );

  it('compares sizes in the units of formatBytes, exactly when they would round alike', () => {
    expect(twoSizes(2 * 1024 * MIB, 3 * MIB)).toEqual(['2.0 GiB', '3.0 MiB']);
    expect(twoSizes(MIB + 40_000, MIB + 2000)).toEqual(['1,088,576 bytes', '1,050,576 bytes']);
  });
});
