/** `sync`'s rules: its state file, the newest version worked out locally, DURATION, and services of every kind. */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { duration } from '../../src/cli/options.js';
import { BusyError } from '../../src/core/errors.js';
import { stateFolder } from '../../src/data-root/state-folder.js';
import { acquireLock } from '../../src/data-root/sync-lock.js';
import {
  emptyState,
  parseState,
  readState,
  STATE_FORMAT,
  type SyncIdentity,
  syncId,
  writeState,
} from '../../src/data-root/sync-state.js';
import { dayBefore } from '../../src/sync/ingestion-days.js';
import { chooseNewest, superseded } from '../../src/sync/newest.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';

const API = 'http://api.test';
const MAG: SyncIdentity = { url: API, filters: { instrument: 'mag' }, allVersions: false };
const name = (day: string, version: string) =>
  `imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_202501${day}_202501${day}_${version}.cdf`;

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-sync-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the sync state file', () => {
  it('is one per service URL and filter set, whatever the URL spelling or the order of the filters', () => {
    expect(syncId(MAG)).toBe(syncId({ ...MAG, url: `${API}/` }));
    expect(syncId(MAG)).not.toBe(syncId({ ...MAG, filters: { instrument: 'swe' } }));
    expect(syncId(MAG)).not.toBe(syncId({ ...MAG, allVersions: true }));
    expect(syncId({ ...MAG, filters: { instrument: 'mag', dataLevel: 'l1a' } })).toBe(
      syncId({ ...MAG, filters: { dataLevel: 'l1a', instrument: 'mag' } }),
    );
  });

  it('is written at once and read back', async () => {
    const state = {
      ...emptyState(MAG),
      cursor: '2025-02-01 10:00:00',
      held: { [name('01', 'v01-00')]: null },
    };
    await writeState(home, MAG, state);
    const loaded = await readState(home, MAG);
    expect(loaded.first).toBe(false);
    expect(loaded.state.cursor).toBe('2025-02-01 10:00:00');
    expect(loaded.state.held).toEqual(state.held);
    // No temporary file is left beside it.
    expect((await readdir(stateFolder(home))).filter((file) => file.includes('.tmp'))).toEqual([]);
    expect((await readState(home, { ...MAG, filters: { instrument: 'swe' } })).first).toBe(true);
  });

  it('when damaged or foreign, is said in one line and treated as a first run', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"format": "mission-data-sync/1", "cursor": 3', /is damaged \(not JSON\)/],
      ['[1, 2, 3]', /is damaged \(not a sync state\)/],
      ['{"format": "someone-else/7", "held": {}}', /is of another format \("someone-else\/7"\)/],
      [JSON.stringify({ ...emptyState(MAG), held: { a: 5 } }), /is damaged/],
      [JSON.stringify(emptyState({ ...MAG, filters: { instrument: 'swe' } })), /belongs to another sync/],
    ];
    for (const [text, problem] of cases) {
      const loaded = parseState(text, MAG, 'state.json');
      expect(loaded.first).toBe(true);
      expect(loaded.state).toEqual(emptyState(MAG));
      expect(loaded.problem).toMatch(problem);
      expect(loaded.problem).not.toContain('\n');
    }
    expect(parseState(JSON.stringify(emptyState(MAG)), MAG, 'state.json').problem).toBeUndefined();
    expect(STATE_FORMAT).toBe('mission-data-sync/1');
  });

  it('asks from the day before the latest ingestion date seen', () => {
    expect(dayBefore('2025-03-01 00:10:00')).toBe('20250228');
    expect(dayBefore('not a date')).toBeUndefined();
  });
});

describe('the newest version, worked out locally', () => {
  it('never lets an older version ingested late replace a newer one held', () => {
    const choice = chooseNewest([name('01', 'v01-01')], [name('01', 'v01-00')]);
    expect(choice).toEqual({ fetch: [], older: [name('01', 'v01-00')] });
  });

  it('fetches a newer version, only the highest of those offered, and each new day', () => {
    const choice = chooseNewest(
      [name('01', 'v01-00')],
      [name('01', 'v01-02'), name('01', 'v01-01'), name('02', 'v01-00'), name('01', 'v01-00')],
    );
    expect(choice.fetch.sort()).toEqual([name('01', 'v01-02'), name('02', 'v01-00')]);
    expect(choice.older).toEqual([name('01', 'v01-01')]);
  });

  it('fetches a file of a naming form it does not read when it is not held', () => {
    const unknown = 'imap/mag/l1a/2025/01/imap_mag_l1a_future-form_2025-01-01.cdf';
    expect(chooseNewest([], [unknown]).fetch).toEqual([unknown]);
    expect(chooseNewest([unknown], [unknown]).fetch).toEqual([]);
  });

  it('names the versions a higher one supersedes', () => {
    expect(superseded([name('01', 'v01-00'), name('01', 'v02-00'), name('02', 'v01-00')])).toEqual([
      name('01', 'v01-00'),
    ]);
  });
});

describe('DURATION (--watch)', () => {
  it('takes 30s, 10m, 1h or plain seconds, at least 1 s', () => {
    expect(duration('30s')).toBe(30_000);
    expect(duration('10m')).toBe(600_000);
    expect(duration('1h')).toBe(3_600_000);
    expect(duration('5')).toBe(5_000);
    expect(duration('1.5s')).toBe(1_500);
    for (const bad of ['0', '0.5s', '', 'abc', '1d', '-5', '10 m', '9999h']) {
      expect(() => duration(bad), bad).toThrow(InvalidArgumentError);
    }
  });
});

describe('the sync lock', () => {
  it('refuses a second holder, naming the live process, and takes over the lock of a dead one', async () => {
    const folder = join(home, 'locks');
    const lock = await acquireLock(folder, 'one', 'sync');
    // This process's own lock counts as stale for itself, so a live one is faked with the parent's pid.
    await writeFile(
      lock.file,
      JSON.stringify({ pid: process.ppid, host: (await import('node:os')).hostname(), since: 'then' }),
    );
    const error = await acquireLock(folder, 'one', 'sync').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BusyError);
    expect((error as BusyError).exitCode).toBe(75);
    expect((error as BusyError).message).toContain(`process ${process.ppid}`);
    await writeFile(
      lock.file,
      JSON.stringify({ pid: 2 ** 22 + 7, host: (await import('node:os')).hostname(), since: 'then' }),
    );
    const taken = await acquireLock(folder, 'one', 'sync');
    expect(JSON.parse(await readFile(taken.file, 'utf8')).pid).toBe(process.pid);
    await taken.release();
    expect((await readdir(folder)).length).toBe(0);
  });
});

describe('client.sync against services of every kind', () => {
  const bytes = 'file bytes';
  const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
  const objects = [
    http.get(`${API}/download/*`, ({ request }) => {
      const url = `http://store.test/objects/${new URL(request.url).pathname.slice('/download/'.length)}`;
      return HttpResponse.json({ statusCode: 302, headers: { Location: url }, body: { download_url: url } });
    }),
    http.get(
      'http://store.test/objects/*',
      () => new HttpResponse(bytes, { headers: { 'Content-Length': String(bytes.length), ETag: etag } }),
    ),
  ];
  const clientWith = (dispatcher: MswDispatcher) =>
    createClient({
      url: API,
      dataDir: join(home, 'data'),
      env: {},
      configFile: join(home, 'missing-config.json'),
      dispatcher,
      retryBaseMs: 1,
    });
  const record = (path: string, ingestion?: string) => ({
    file_path: path,
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: path.slice(-24, -16),
    end_date: path.slice(-24, -16),
    version: path.slice(-10, -4),
    extension: 'cdf',
    ...(ingestion ? { ingestion_date: ingestion } : {}),
  });

  it('compares the whole selection with a service whose records carry no ingestion date, asking for no held file', async () => {
    const dispatcher = new MswDispatcher([
      http.get(`${API}/query`, () =>
        HttpResponse.json([record(name('01', 'v01-00')), record(name('02', 'v01-00'))]),
      ),
      ...objects,
    ]);
    const client = clientWith(dispatcher);
    const first = await client.sync({ instrument: 'mag' });
    expect(first).toMatchObject({ firstRun: true, compared: 'whole', inStep: true });
    expect(first.fetched).toHaveLength(2);
    const again = await client.sync({ instrument: 'mag' });
    expect(again).toMatchObject({ firstRun: false, compared: 'whole', fetched: [], inStep: true });
    const queries = dispatcher.requests.filter((request) => request.url.startsWith(`${API}/query`));
    expect(queries.every((request) => !request.url.includes('ingestion_start_date'))).toBe(true);
    expect(dispatcher.requests.filter((request) => request.url.startsWith(`${API}/download/`))).toHaveLength(
      2,
    );
    await client.close();
  });

  it('falls back to the whole selection when the service refuses ingestion_start_date (a 400 naming it)', async () => {
    const notices: string[] = [];
    const dispatcher = new MswDispatcher([
      http.get(`${API}/query`, ({ request }) =>
        new URL(request.url).searchParams.has('ingestion_start_date')
          ? HttpResponse.json(
              { statusCode: 400, body: 'Invalid parameter: ingestion_start_date is not supported.' },
              { status: 400 },
            )
          : HttpResponse.json([record(name('01', 'v01-00'), '2025-02-01 10:00:00')]),
      ),
      ...objects,
    ]);
    const client = clientWith(dispatcher);
    await client.sync({ instrument: 'mag' });
    const again = await client.sync({ instrument: 'mag' }, { onNotice: (line) => notices.push(line) });
    expect(again).toMatchObject({ compared: 'whole', fetched: [], inStep: true });
    expect(notices).toEqual([expect.stringContaining('refuses ingestion_start_date')]);
    // The state remembers: the next run does not ask again.
    const third = await client.sync({ instrument: 'mag' });
    expect(third.compared).toBe('whole');
    const refused = dispatcher.requests.filter((request) => request.url.includes('ingestion_start_date'));
    expect(refused).toHaveLength(1);
    expect(dispatcher.requests.filter((request) => request.url.startsWith(`${API}/download/`))).toHaveLength(
      1,
    );
    await client.close();
  });

  it('says a damaged state in one notice and runs as a first run', async () => {
    const dispatcher = new MswDispatcher([
      http.get(`${API}/query`, () =>
        HttpResponse.json([record(name('01', 'v01-00'), '2025-02-01 10:00:00')]),
      ),
      ...objects,
    ]);
    const client = clientWith(dispatcher);
    await client.sync({ instrument: 'mag' });
    const file = join(stateFolder(join(home, 'data')), `${syncId(MAG)}.json`);
    await writeFile(file, '{ half a state');
    const notices: string[] = [];
    const again = await client.sync({ instrument: 'mag' }, { onNotice: (line) => notices.push(line) });
    expect(again).toMatchObject({ firstRun: true, compared: 'whole', skipped: 1, fetched: [] });
    expect(notices).toEqual([expect.stringMatching(/is damaged \(not JSON\); starting as a first run\.$/)]);
    expect(JSON.parse(await readFile(file, 'utf8')).format).toBe(STATE_FORMAT);
    await client.close();
  });
});
