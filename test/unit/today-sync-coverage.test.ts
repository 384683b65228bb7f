/**
 * `sync`, `coverage` and `status` over names of today's archive beside the specification's: one product's
 * versions of both generations ordered by `compareVersions`, a repointing its own day, SPICE kernels by series.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { ValidationError } from '../../src/core/errors.js';
import { buildCoverage } from '../../src/coverage/coverage.js';
import { dayKey, latestByDay, productKey, recordPath } from '../../src/coverage/products.js';
import { coverageParams } from '../../src/coverage/run.js';
import { matchesFilters, scopeFolders } from '../../src/coverage/scope.js';
import { parseName } from '../../src/naming/names.js';
import { chooseNewest, superseded } from '../../src/sync/newest.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';

const API = 'http://api.test';
const FOLDER = 'imap/mag/l1a/2025/01';
const V1_1 = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_v001.0001.cdf`;
const V1_2 = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_v001.0002.cdf`;
const V2_0 = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_v002.0000.cdf`;
const SPEC = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_20250105_v01-00.cdf`;
/** One product of the archive: three versions of today's form and one of the specification's. */
const ARCHIVE = [SPEC, V1_1, V2_0, V1_2];

const file = (path: string) => parseName(path.slice(path.lastIndexOf('/') + 1));

/** The record today's service lists a path with (the specification's records carry `end_date`). */
function record(path: string) {
  const parsed = file(path);
  if (parsed.kind !== 'science') throw new Error(`not science: ${path}`);
  return {
    file_path: path,
    instrument: parsed.instrument,
    data_level: parsed.dataLevel,
    descriptor: parsed.descriptor,
    start_date: parsed.startDate,
    ...(parsed.generation === 'spec' ? { end_date: parsed.endDate } : { repointing: null, cr: null }),
    version: parsed.version,
    extension: parsed.extension,
    ingestion_date: '2025-02-01 10:00:00',
  };
}

describe("a product's key, for every kind", () => {
  it("is one for a spec-form v01-00 and today's versions of one instrument, level, descriptor and day", () => {
    const keys = new Set(ARCHIVE.map((path) => dayKey(file(path))));
    expect(keys.size).toBe(1);
    expect(productKey(file(SPEC))).toBe(productKey(file(V2_0)));
  });

  it('tells repointings, rotations, other days and other kinds apart', () => {
    const keys = [
      'imap_mag_l1a_norm-mago_20250105_v001.0001.cdf',
      'imap_mag_l1a_norm-mago_20250105-repoint00042_v001.0001.cdf',
      'imap_mag_l1a_norm-mago_20250105-repoint00043_v001.0001.cdf',
      'imap_mag_l1a_norm-mago_20250105-cr02291_v001.0001.cdf',
      'imap_mag_l1a_norm-mago_20250106_v001.0001.cdf',
      'imap_mag_l1a_norm-mago_20250105_v001.0001.png',
      'imap_mag_l1a_norm-mago_20250105_v001.0001.json',
    ].map((name) => dayKey(parseName(name)));
    expect(new Set(keys).size).toBe(keys.length);
    // A repointing's versions are versions of one another.
    expect(dayKey(parseName('imap_mag_l1a_x_20250105-repoint00042_v001.0001.cdf'))).toBe(
      dayKey(parseName('imap_mag_l1a_x_20250105-repoint00042_v002.0000.cdf')),
    );
  });

  it('keys ancillary files and release manifests by instrument, descriptor and start day, both generations alike', () => {
    expect(dayKey(parseName('imap_mag_calibration_20250101_v01-00.cdf'))).toBe(
      dayKey(parseName('imap_mag_calibration_20250101_20250301_v002.cdf')),
    );
    expect(dayKey(parseName('imap_mag_release_20250101_20250301_v001.txt'))).toBe(
      dayKey(parseName('imap_mag_release_20250101_v002.txt')),
    );
    expect(dayKey(parseName('imap_mag_release_20250101_v001.txt'))).not.toBe(
      dayKey(parseName('imap_mag_release_20250102_v001.txt')),
    );
  });

  it('keys a SPICE kernel by its series, so the newest of a series is the latest', () => {
    const latest = latestByDay(
      ['naif0011.tls', 'naif0012.tls', 'imap_sclk_0012.tsc', 'imap_2025_122_2025_122_01.spin.csv'].map(
        (name) => parseName(name),
      ),
    );
    expect([...latest.values()].map((kernel) => kernel.name).sort()).toEqual([
      'imap_2025_122_2025_122_01.spin.csv',
      'imap_sclk_0012.tsc',
      'naif0012.tls',
    ]);
  });
});

describe('the newest version, worked out locally', () => {
  it('fetches v002.0000 alone of v001.0001, v001.0002, v002.0000 and a spec-form v01-00', () => {
    expect(chooseNewest([], ARCHIVE)).toEqual({ fetch: [V2_0], older: [SPEC, V1_1, V1_2] });
    expect(chooseNewest([V2_0], [V1_2])).toEqual({ fetch: [], older: [V1_2] });
    expect(superseded(ARCHIVE).sort()).toEqual([SPEC, V1_1, V1_2].sort());
  });

  it('orders a minor-only vNNN before any major.minor version, and both after every vXX-YY', () => {
    const legacy = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_v999.cdf`;
    const first = `${FOLDER}/imap_mag_l1a_norm-mago_20250105_v000.0000.cdf`;
    expect(chooseNewest([], [legacy, first]).fetch).toEqual([first]);
    expect(chooseNewest([], [SPEC, legacy]).fetch).toEqual([legacy]);
  });
});

describe('coverage of science products', () => {
  it('shows v002.0000 for the day of an archive holding v001.0001, v001.0002, v002.0000 and v01-00', () => {
    const report = buildCoverage(ARCHIVE.map(file), [], { instrument: 'mag' });
    expect(report.products).toHaveLength(1);
    expect(report.products[0]).toMatchObject({
      instrument: 'mag',
      dataLevel: 'l1a',
      descriptor: 'norm-mago',
    });
    expect(report.products[0]?.days).toEqual([
      { date: '20250105', state: 'archive', version: 'v002.0000', filePath: V2_0 },
    ]);
    const held = buildCoverage(ARCHIVE.map(file), [file(V1_2)], { instrument: 'mag' });
    expect(held.products[0]?.days[0]).toMatchObject({ state: 'outdated', localVersion: 'v001.0002' });
    const current = buildCoverage(ARCHIVE.map(file), [file(V2_0), file(SPEC)], { instrument: 'mag' });
    expect(current.products[0]?.days[0]).toMatchObject({ state: 'local', localVersion: 'v002.0000' });
  });

  it('shows a day of several repointings as held only when each is, with the newest version', () => {
    const one = parseName('imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf');
    const two = parseName('imap_hi_l3a_ena-45_20250105-repoint00043_v001.0000.cdf');
    const report = buildCoverage([one, two], [one], {});
    expect(report.products[0]?.days).toEqual([
      {
        date: '20250105',
        state: 'archive',
        version: 'v001.0002',
        filePath: one.path,
        localVersion: 'v001.0002',
      },
    ]);
    expect(buildCoverage([one, two], [one, two], {}).products[0]?.days[0]?.state).toBe('local');
  });

  it('leaves quicklooks, dependency files, release manifests and SPICE kernels out of the calendar', () => {
    const others = [
      'imap_mag_l1a_norm-mago_20250105_v001.0001.png',
      'imap_mag_l1a_norm-mago_20250105_v001.0001.json',
      'imap_mag_release_20250101_v001.txt',
      'naif0012.tls',
    ].map((name) => parseName(name));
    expect(buildCoverage([...others, file(V1_1)], others, {}).products).toHaveLength(1);
  });

  it('refuses the SPICE table, saying where kernels are listed', () => {
    const error = (() => {
      try {
        coverageParams({ table: 'spice', kernelType: 'leapseconds' });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/SPICE kernels cover spans/);
    expect((error as ValidationError).hint).toMatch(/query --table spice/);
  });
});

describe('the scope of the SPICE table and of the filters of today', () => {
  it('selects kernels by type and by coverage overlapping the dates, in their own folders', () => {
    const spin = parseName('imap_2025_122_2025_124_01.spin.csv');
    const naif = parseName('naif0012.tls');
    expect(matchesFilters(spin, { table: 'spice', kernelType: 'spin', startDate: '20250503' })).toBe(true);
    expect(matchesFilters(spin, { table: 'spice', startDate: '20250505' })).toBe(false);
    expect(matchesFilters(naif, { table: 'spice', startDate: '20250505' })).toBe(true);
    expect(matchesFilters(naif, { table: 'spice', kernelType: 'spin' })).toBe(false);
    expect(matchesFilters(naif, { instrument: 'mag' })).toBe(false);
    expect(scopeFolders({ table: 'spice', kernelType: 'leapseconds' })).toEqual([['imap', 'spice', 'lsk']]);
    expect(scopeFolders({ table: 'spice' })).toEqual([['imap', 'spice']]);
  });

  it('selects by repointing, major and minor version, a file without that part not selected', () => {
    const repointed = parseName('imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf');
    expect(matchesFilters(repointed, { instrument: 'hi', repointing: '42' })).toBe(true);
    expect(
      matchesFilters(repointed, { repointing: 'repoint00042', majorVersion: '1', minorVersion: '0002' }),
    ).toBe(true);
    expect(matchesFilters(repointed, { repointing: '43' })).toBe(false);
    expect(matchesFilters(repointed, { majorVersion: '2' })).toBe(false);
    expect(matchesFilters(file(SPEC), { majorVersion: '1' })).toBe(false);
    expect(matchesFilters(file(V1_1), { repointing: '42' })).toBe(false);
  });

  it("reads a SPICE record's storage path from its file_name when it has no file_path", () => {
    expect(recordPath({ file_name: 'naif0012.tls' })).toBe('imap/spice/lsk/naif0012.tls');
    expect(recordPath({ file_path: V1_1 })).toBe(V1_1);
    expect(recordPath({ file_name: 'notes.txt' })).toBeUndefined();
  });
});

describe('client.sync, coverage and status against a service holding both generations of one product', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'mission-today-sync-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  const bytes = 'file bytes';
  const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
  /** A service that answers every query with every version (an incremental ask, or one without `latest`). */
  const service = () =>
    new MswDispatcher([
      http.get(`${API}/query`, () => HttpResponse.json(ARCHIVE.map(record))),
      http.get(`${API}/download/*`, ({ request }) => {
        const url = `http://store.test/objects/${new URL(request.url).pathname.slice('/download/'.length)}`;
        return HttpResponse.json({
          statusCode: 302,
          headers: { Location: url },
          body: { download_url: url },
        });
      }),
      http.get(
        'http://store.test/objects/*',
        () => new HttpResponse(bytes, { headers: { 'Content-Length': String(bytes.length), ETag: etag } }),
      ),
    ]);
  const clientWith = (dispatcher: MswDispatcher) =>
    createClient({
      url: API,
      dataDir: join(home, 'data'),
      env: {},
      configFile: join(home, 'missing-config.json'),
      dispatcher,
      retryBaseMs: 1,
    });
  const downloads = (dispatcher: MswDispatcher) =>
    dispatcher.requests
      .filter((request) => request.url.startsWith(`${API}/download/`))
      .map((request) => request.url.slice(`${API}/download/`.length));

  it('sync fetches v002.0000 alone', async () => {
    const dispatcher = service();
    const client = clientWith(dispatcher);
    const result = await client.sync({ instrument: 'mag' });
    expect(result).toMatchObject({ fetched: [V2_0], failed: [], inStep: true });
    expect(downloads(dispatcher)).toEqual([V2_0]);
    await client.close();
  });

  it('sync --all-versions fetches all four', async () => {
    const dispatcher = service();
    const client = clientWith(dispatcher);
    const result = await client.sync({ instrument: 'mag' }, { allVersions: true });
    expect(result.fetched.sort()).toEqual([...ARCHIVE].sort());
    expect(downloads(dispatcher).sort()).toEqual([...ARCHIVE].sort());
    await client.close();
  });

  it('download --version latest fetches v002.0000 alone, whatever versions the service answers with', async () => {
    const dispatcher = service();
    const client = clientWith(dispatcher);
    const selected = await client.downloadMatching({ instrument: 'mag', version: 'latest' });
    expect(selected.targets).toEqual([V2_0]);
    expect(downloads(dispatcher)).toEqual([V2_0]);
    const every = await client.downloadMatching({ instrument: 'mag' }, { dryRun: true });
    expect(every.targets).toEqual(ARCHIVE);
    await client.close();
  });

  it('coverage shows v002.0000, and status calls a held v001.0002 outdated by it', async () => {
    const client = clientWith(service());
    const report = await client.coverage({ instrument: 'mag' });
    expect(report.products[0]?.days).toEqual([
      { date: '20250105', state: 'archive', version: 'v002.0000', filePath: V2_0 },
    ]);
    const local = join(home, 'data', ...V1_2.split('/'));
    await mkdir(dirname(local), { recursive: true });
    await writeFile(local, bytes);
    const status = await client.status({ instrument: 'mag' });
    expect(status.entries).toEqual([
      expect.objectContaining({
        status: 'outdated',
        path: V1_2,
        newer: V2_0,
        reason: 'the archive has v002.0000',
      }),
    ]);
    expect(status).toMatchObject({ archiveFiles: 4, currentFiles: 1, currentHere: 0 });
    await client.close();
  });
});
