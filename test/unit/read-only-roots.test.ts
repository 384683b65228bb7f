/**
 * The commands that only read a data root (`verify`, `status`, `coverage`) and a root that is not there or is no
 * folder: verify refuses both before asking anything (a nightly run with a mistyped root must not pass), status
 * and coverage refuse a file and say a missing root holds nothing yet.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { ExitCode, LocalFileError } from '../../src/core/errors.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { unixOnly } from '../helpers/platform.js';

const API = 'http://api.test';
const RECORD = {
  file_path: 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf',
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm',
  start_date: '20240101',
  version: 'v01-00',
  extension: 'cdf',
  ingestion_date: '2024-01-02 00:00:00',
};

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-roots-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

function clientOn(dataDir: string, dispatcher: MswDispatcher) {
  return createClient({
    url: API,
    dataDir,
    env: {},
    configFile: join(home, 'missing-config.json'),
    dispatcher,
    retryBaseMs: 1,
  });
}

const archive = () => new MswDispatcher([http.get(`${API}/query`, () => HttpResponse.json([RECORD]))]);

async function failure(promise: Promise<unknown>): Promise<LocalFileError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LocalFileError);
  return error as LocalFileError;
}

describe('verify', () => {
  it('refuses a data root that does not exist, before any request (exit 2)', async () => {
    const dispatcher = archive();
    const root = join(home, 'nonexist');
    const error = await failure(clientOn(root, dispatcher).verify({ instrument: 'mag' }));
    expect(error.message).toBe(`The data root ${root} does not exist.`);
    expect(error).toMatchObject({ code: 'E_DATA_ROOT', exitCode: ExitCode.Usage });
    expect(dispatcher.requests).toHaveLength(0);
  });

  it('refuses a data root that is a file, as download does (exit 2)', async () => {
    const dispatcher = archive();
    const root = join(home, 'afile');
    await writeFile(root, 'x');
    const error = await failure(clientOn(root, dispatcher).verify({ instrument: 'mag' }));
    expect(error.message).toBe(`The data root ${root} is a file, not a folder.`);
    expect(error.exitCode).toBe(ExitCode.Usage);
    expect(dispatcher.requests).toHaveLength(0);
    const below = await failure(clientOn(join(root, 'sub'), dispatcher).verify({ instrument: 'mag' }));
    expect(below.message).toBe(
      `The data root ${join(root, 'sub')} is not a folder: a part of its path is a file.`,
    );
  });
});

describe('status and coverage', () => {
  it('refuse a data root that is a file', async () => {
    const root = join(home, 'afile');
    await writeFile(root, 'x');
    const client = clientOn(root, archive());
    expect((await failure(client.status({ instrument: 'mag' }))).message).toContain(
      'is a file, not a folder',
    );
    expect((await failure(client.coverage({ instrument: 'mag' }))).message).toContain(
      'is a file, not a folder',
    );
  });

  it('say a missing data root holds nothing yet, and still count the archive', async () => {
    const client = clientOn(join(home, 'nonexist'), archive());
    const status = await client.status({ instrument: 'mag' });
    expect(status).toMatchObject({ rootMissing: true, localFiles: 0, archiveFiles: 1 });
    expect(status.counts.missing).toBe(1);
    const coverage = await client.coverage({ instrument: 'mag' });
    expect(coverage.rootMissing).toBe(true);
    expect(coverage.products).toHaveLength(1);
  });

  it('say nothing of it when the data root is there', async () => {
    const root = join(home, 'data');
    const client = clientOn(root, archive());
    await mkdir(root);
    expect((await client.status({ instrument: 'mag' })).rootMissing).toBe(false);
  });
});

const FIFO = unixOnly('mkfifo');

describe('status and a place taken by what is no regular file', () => {
  it.skipIf(FIFO.missing)(
    FIFO.title('lists the file once, as missing, saying what is in its place'),
    async () => {
      const root = join(home, 'data');
      await mkdir(join(root, 'imap/mag/l1a/2024/01'), { recursive: true });
      execFileSync('mkfifo', [join(root, RECORD.file_path)]);
      const status = await clientOn(root, archive()).status({ instrument: 'mag' });
      expect(status.entries).toEqual([
        {
          status: 'missing',
          path: RECORD.file_path,
          localPath: join(root, RECORD.file_path),
          reason: 'a FIFO is in its place, not a regular file',
        },
      ]);
      expect(status.counts).toMatchObject({ missing: 1, extra: 0 });
    },
  );
});
