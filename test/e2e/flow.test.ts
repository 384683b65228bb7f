/**
 * The whole round trip through the built command line, in each wire mode of the reference server:
 * upload, query in every output format, download, and byte-equal files at the end.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIRE_MODES } from '../../src/server/wire.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  listFiles,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

const MAG_1 = scienceName('mag', 3);
const MAG_2 = scienceName('mag', 40, 'l1b');
const SWE = scienceName('swe', 5, 'l0');
const ANCILLARY = 'imap_mag_calibration_20240101_v01-00.json';
const FILES: Record<string, Buffer> = {
  [MAG_1]: bytesFor(MAG_1, 70_000),
  [MAG_2]: bytesFor(MAG_2, 1_500_000),
  [SWE]: bytesFor(SWE, 4096),
  [ANCILLARY]: Buffer.from('{"gain": 1.5}\n'),
};
const PATHS: Record<string, string> = {
  [MAG_1]: 'imap/mag/l1a/2024/01/',
  [MAG_2]: 'imap/mag/l1b/2024/02/',
  [SWE]: 'imap/swe/l0/2024/01/',
  [ANCILLARY]: 'imap/ancillary/mag/',
};
const pathOf = (name: string) => `${PATHS[name]}${name}`;

beforeAll(() => assertBuilt());

describe.each(WIRE_MODES)('with the server in wire mode %s', (wire) => {
  let server: TestServer;
  let home: string;

  beforeAll(async () => {
    server = await startServer({ wire });
    // The second pass of .ci/run plays the same flow against a bucket and PostgreSQL.
    expect(server.storeDir.startsWith('s3://')).toBe(ON_BACKENDS);
    home = await tempDir();
    for (const [name, contents] of Object.entries(FILES)) await putFile(join(home, 'data'), name, contents);
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup(home);
  });

  it('uploads, queries in every format and downloads byte-equal files', async () => {
    // As the client conventions say: run from the folder holding the data root, give the path inside it.
    const uploaded = await runCli(['upload', '--url', server.url, ...Object.keys(FILES).map(pathOf)], {
      cwd: home,
    });
    expect(uploaded.stderr).toContain('4 uploaded;');
    expect(uploaded.code).toBe(0);

    const again = await runCli(['upload', '--url', server.url, pathOf(SWE)], { cwd: home });
    // A re-run finds the file stored with the same bytes: done, not an error.
    expect(again.code).toBe(0);
    // Unchanged files are counted, not listed (a line each only with --verbose).
    expect(again.stderr).toContain('1 already stored (same bytes);');
    expect(again.stderr).not.toContain(pathOf(SWE));

    const json = await runCli(
      ['query', '--url', server.url, '--instrument', 'mag', '--output-format', 'json'],
      {
        cwd: home,
      },
    );
    expect(json.code).toBe(0);
    const records = JSON.parse(json.stdout) as Array<{ file_path: string; version: string }>;
    expect(records.map((record) => record.file_path).sort()).toEqual([pathOf(MAG_1), pathOf(MAG_2)].sort());

    const csv = await runCli(
      ['query', '--url', server.url, '--instrument', 'mag', '--output-format', 'csv'],
      {
        cwd: home,
      },
    );
    expect(csv.code).toBe(0);
    expect(csv.stdout).not.toContain('\r');
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('file_path');
    expect(csv.stdout).toContain(pathOf(MAG_1));

    const table = await runCli(['query', '--url', server.url, '--instrument', 'mag'], { cwd: home });
    expect(table.code).toBe(0);
    expect(table.stderr).toContain('Found [2] matching files');
    expect(table.stdout).toContain(MAG_1);

    // The JSON that query printed, piped into download.
    const down = await runCli(['download', '--url', server.url, '-'], {
      cwd: home,
      env: { MISSION_DATA_DIR: 'downloads' },
      input: json.stdout,
    });
    expect(down.stderr).toContain('2 downloaded;');
    expect(down.code).toBe(0);

    // Query options instead of paths: every match.
    const byQuery = await runCli(
      [
        'download',
        '--url',
        server.url,
        '--data-dir',
        'downloads',
        '--instrument',
        'swe',
        '--data-level',
        'l0',
      ],
      { cwd: home },
    );
    expect(byQuery.code).toBe(0);
    const ancillary = await runCli(['download', '--url', server.url, '--data-dir', 'downloads', ANCILLARY], {
      cwd: home,
    });
    expect(ancillary.code).toBe(0);

    expect(await listFiles(join(home, 'downloads'))).toEqual(Object.keys(FILES).map(pathOf).sort());
    for (const [name, contents] of Object.entries(FILES)) {
      expect((await readFile(join(home, 'downloads', pathOf(name)))).equals(contents)).toBe(true);
    }
  });
});
