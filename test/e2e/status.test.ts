/**
 * `status` end to end on a local copy of a generated year of daily files (scripts/year-archive.js): after files
 * are removed, altered and superseded in the archive, it lists exactly those (and the local files the archive
 * does not hold), exits 1 until the copy is in step, and `download --only-missing` / `--update` fetch exactly
 * what it lists.
 */
import { execFile } from 'node:child_process';
import { appendFile, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { statusTargets } from '../../src/coverage/status-targets.js';
import {
  assertBuilt,
  BUCKET_LISTS_PAST_ONE_PAGE,
  cleanup,
  listFiles,
  ON_BACKENDS,
  putFile,
  ROOT,
  runCli,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const exec = promisify(execFile);

const path = (level: string, date: string, version = 'v01-00') =>
  `imap/mag/${level}/${date.slice(0, 4)}/${date.slice(4, 6)}/imap_mag_${level}_norm_${date}_${date}_${version}.cdf`;

const REMOVED = [path('l1a', '20250301'), path('l1b', '20250815'), path('l2', '20250102')];
/** An older version removed while the latest stays: nothing is missing. */
const OLDER_REMOVED = path('l1a', '20250601', 'v01-00');
const ALTERED_SAME_SIZE = path('l1a', '20250401');
const ALTERED_LONGER = path('l2', '20250710');
/** Touched, bytes unchanged: not changed. */
const TOUCHED = path('l1b', '20250102');
const SUPERSEDED: Array<[string, string]> = [
  [path('l1a', '20250801'), path('l1a', '20250801', 'v01-01')],
  [path('l1b', '20251010'), path('l1b', '20251010', 'v03-00')],
];
const NOT_IN_ARCHIVE = path('l1a', '20250901', 'v05-00');
const BAD_NAME = 'imap/mag/l2/2025/09/notes.txt';
const MISPLACED = 'imap/mag/l1b/2025/03/imap_mag_l1b_norm_20250415_20250415_v01-00.cdf';
const YEAR = ['--instrument', 'mag', '--start-date', '20250101', '--end-date', '20251231'];

// A year is 1,051 objects, more than one page of a bucket's listing (see BUCKET_LISTS_PAST_ONE_PAGE).
const SKIPPED = ON_BACKENDS && !BUCKET_LISTS_PAST_ONE_PAGE;

let store: string;
let home: string;
let dataDir: string;
let server: TestServer;

const cli = (args: string[]) =>
  runCli([...args, '--url', server.url, '--data-dir', dataDir], { cwd: home, timeoutMs: 120_000 });

beforeAll(async () => {
  if (SKIPPED) return;
  assertBuilt();
  store = await tempDir('mission-status-store-');
  home = await tempDir('mission-status-home-');
  dataDir = join(home, 'data');
  await exec(process.execPath, [join(ROOT, 'scripts/year-archive.js'), store]);
  server = await startServer({ storeDir: store });
  const fetched = await cli(['download', ...YEAR, '--quiet']);
  expect(fetched.stderr).toBe('');
  expect(fetched.code).toBe(0);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

describe.skipIf(SKIPPED)('status of a local copy of a year of daily files', () => {
  it('is in step after a full download: nothing on stdout, exit 0', async () => {
    const run = await cli(['status', ...YEAR]);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('In step: 1046 current files in the archive, all here.\n');
    expect(run.code).toBe(0);
  });

  it('lists exactly the files removed, altered and superseded, and the local files the archive lacks', async () => {
    for (const removed of [...REMOVED, OLDER_REMOVED]) await rm(join(dataDir, removed));
    const sameSize = join(dataDir, ALTERED_SAME_SIZE);
    const bytes = await readFile(sameSize);
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    await writeFile(sameSize, bytes);
    await appendFile(join(dataDir, ALTERED_LONGER), 'more');
    await utimes(join(dataDir, TOUCHED), new Date('2030-01-01'), new Date('2030-01-01'));
    await putFile(dataDir, NOT_IN_ARCHIVE, 'a local product');
    await putFile(
      dataDir,
      'imap_swe_l1a_sci_20250901_20250901_v01-00.cdf',
      'another instrument: out of scope',
    );
    await writeFile(join(dataDir, BAD_NAME), 'notes');
    await writeFile(join(dataDir, MISPLACED), 'misplaced');
    await writeFile(join(dataDir, `${path('l2', '20250903')}.part.12345`), 'a download left halfway');
    await server.stop();
    for (const [, newer] of SUPERSEDED) await putFile(store, newer, `reprocessed ${newer}`);
    server = await startServer({ storeDir: store });

    const run = await cli(['status', ...YEAR]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.replace(/ \(.*\)$/, '')).sort()).toEqual(
      [
        ...REMOVED.map((file) => `missing ${file}`),
        `changed ${ALTERED_SAME_SIZE}`,
        `changed ${ALTERED_LONGER}`,
        ...SUPERSEDED.map(([old]) => `outdated ${old}`),
        `extra ${NOT_IN_ARCHIVE}`,
        `extra ${BAD_NAME}`,
        `extra ${MISPLACED}`,
      ].sort(),
    );
    expect(lines).toContain(`outdated ${SUPERSEDED[1]?.[0]} (the archive has v03-00)`);
    expect(lines).toContain(`extra ${NOT_IN_ARCHIVE} (not in the archive)`);
    expect(run.stderr).toBe(
      '3 missing, 2 outdated, 3 extra, 2 changed.\n1046 current files in the archive, 1041 here.\n',
    );
  });

  it('answers the same as JSON, with the newer version of each outdated file', async () => {
    const run = await cli(['status', ...YEAR, '--output-format', 'json', '--quiet']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    const entries = JSON.parse(run.stdout) as Array<{
      status: string;
      file_path: string;
      newer: string | null;
    }>;
    expect(entries.filter((entry) => entry.status === 'outdated')).toEqual(
      SUPERSEDED.map(([old, newer]) =>
        expect.objectContaining({ file_path: old, local_path: join(dataDir, old), newer }),
      ),
    );
    expect(entries).toHaveLength(10);
    // The same names as download's records; a missing file has no local path yet.
    expect(entries.find((entry) => entry.status === 'missing')).toMatchObject({
      local_path: null,
      reason: null,
    });
    expect(entries.every((entry) => !('localPath' in entry) && !('path' in entry))).toBe(true);
  });

  it('keeps to the filters: one level, and the library call agrees', async () => {
    const run = await cli(['status', '--instrument', 'mag', '--data-level', 'l2']);
    const lines = run.stdout.trimEnd().split('\n');
    const downloaded = `contents of ${ALTERED_LONGER.slice(ALTERED_LONGER.lastIndexOf('/') + 1)}\n`.length;
    expect(lines.slice(0, 2)).toEqual([
      `missing ${path('l2', '20250102')}`,
      `changed ${ALTERED_LONGER} (${downloaded + 4} bytes, ${downloaded} when downloaded)`,
    ]);
    expect(lines[2]).toMatch(new RegExp(`^extra ${BAD_NAME.replaceAll('.', '\\.')} \\(.+\\)$`));
    expect(lines).toHaveLength(3);
    expect(run.code).toBe(1);
    const client = createClient({ url: server.url, dataDir });
    try {
      const report = await client.status({ instrument: 'mag', startDate: '20250101', endDate: '20251231' });
      expect(report.counts).toEqual({ missing: 3, outdated: 2, extra: 3, changed: 2 });
      expect(statusTargets(report, 'missing').sort()).toEqual([...REMOVED].sort());
      await expect(client.status({ instrument: 'mag', ingestionStartDate: '20250101' })).rejects.toThrow(
        /ingestion/,
      );
    } finally {
      await client.close();
    }
  });

  it('download --only-missing fetches exactly the missing files, --update the rest, until status is in step', async () => {
    const before = new Set(await listFiles(dataDir));
    const missing = await cli(['download', ...YEAR, '--only-missing', '--quiet']);
    expect(missing.code).toBe(0);
    const added = (await listFiles(dataDir)).filter((file) => !before.has(file));
    expect(added.sort()).toEqual([...REMOVED].sort());

    const update = await cli(['download', ...YEAR, '--update', '--quiet']);
    expect(update.code).toBe(0);
    const after = await listFiles(dataDir);
    for (const [, newer] of SUPERSEDED) expect(after).toContain(newer);
    expect((await readFile(join(dataDir, ALTERED_LONGER), 'utf8')).endsWith('more')).toBe(false);

    // Extra files are listed, but the archive's files are in place: `status || download --update` stops here.
    const left = await cli(['status', ...YEAR]);
    expect(left.code).toBe(0);
    expect(
      left.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(' ')[0]),
    ).toEqual(['extra', 'extra', 'extra']);
    expect(left.stderr).toContain('3 extra files here, listed above; --strict counts extra files.\n');
    const strict = await cli(['status', ...YEAR, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/^3 extra\.\n1046 current files in the archive, \d+ here\.\n/);
    for (const extra of [NOT_IN_ARCHIVE, BAD_NAME, MISPLACED]) await rm(join(dataDir, extra));
    const inStep = await cli(['status', ...YEAR]);
    expect(inStep.stdout).toBe('');
    expect(inStep.code).toBe(0);
    const nothing = await cli(['download', ...YEAR, '--update']);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toContain('Nothing to download: the local copy is in step with the archive.');
  });

  it('refuses ingestion-day filters and paths with --only-missing, as usage errors', async () => {
    const ingestion = await cli(['status', '--instrument', 'mag', '--ingestion-start-date', '20250101']);
    expect(ingestion.code).toBe(2);
    expect(ingestion.stderr).toContain('a name carries no ingestion day: leave out --ingestion-start-date.');
    expect(ingestion.stderr).not.toContain('ingestionStartDate');
    const paths = await cli(['download', '--only-missing', path('l1a', '20250101')]);
    expect(paths.code).toBe(2);
  });
});
