/**
 * Records of a naming form this version does not check (one newer than today's archive's, such as a
 * `v0001.00001` version): the client keeps them, counts them once per query, shows them in every output format
 * and downloads them by their path, while hostile paths and fields that are not text are still refused. Today's
 * names (`v001.0002`, `v001`, `-repoint00012`, ancillary `v001`) are known forms: checked like the
 * specification's, and never counted as newer.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { formatCsv, formatJson, formatTable } from '../../src/cli/output.js';
import { newerFormsWarning } from '../../src/cli/query-warnings.js';
import { ProtocolError, ValidationError } from '../../src/core/errors.js';
import { resolveLocalPath } from '../../src/naming/layout.js';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { MAG_RECORD, REPOINTED_RECORD } from '../helpers/records.js';
import { makeTempDir } from '../server/helpers.js';

const A = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to fail');
}

/** Records of a newer naming form, beside one of the specification's. */
const SPEC_RECORD: QueryRecord = { ...MAG_RECORD, file_path: A, ingestion_date: '2025-01-02 03:04:05' };
const NEWER_VERSION = {
  file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_v0001.00001.cdf',
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm-mago',
  start_date: '20250101',
  version: 'v0001.00001',
  extension: 'cdf',
};
const REPOINTED = {
  file_path: 'imap/hi/l1b/2025/01/imap_hi_l1b_45sensor-de_20250101-repoint00012_v0002.cdf',
  version: 'v0002',
};

function mixedService(records: unknown[], content = 'newer bytes') {
  return new MswDispatcher([
    http.get('http://api.test/query', () => HttpResponse.json(records)),
    http.get('http://api.test/download/*', ({ request }) => {
      const path = new URL(request.url).pathname.slice('/download/'.length);
      return HttpResponse.json({
        statusCode: 302,
        headers: { Location: `http://store.test/objects/${path}?sig=1` },
        body: {},
      });
    }),
    http.get('http://store.test/objects/*', () => new HttpResponse(content)),
  ]);
}

describe('records of a naming form this version does not check', () => {
  let home: string;
  beforeAll(async () => {
    home = await makeTempDir('mission-newer-forms-');
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  it('are kept, counted once per query, and shown in all three formats with blanks for what they lack', async () => {
    const dispatcher = mixedService([SPEC_RECORD, NEWER_VERSION, REPOINTED]);
    const client = createClient({
      url: 'http://api.test',
      dispatcher,
      env: {},
      configFile: join(home, 'none.json'),
    });
    const counts: number[] = [];
    const records = await client.query(
      { instrument: 'mag' },
      { onNewerForms: (count) => counts.push(count) },
    );
    expect(records).toEqual([SPEC_RECORD, NEWER_VERSION, REPOINTED]);
    expect(counts).toEqual([2]);
    expect(newerFormsWarning(2)).toBe(
      'Warning: 2 records use a naming form this version does not check; shown as received, and downloadable by their file_path.\n',
    );

    expect(JSON.parse(formatJson(records))).toEqual([SPEC_RECORD, NEWER_VERSION, REPOINTED]);

    const csv = formatCsv(records).split(/\r?\n/);
    expect(csv[1]).toBe(`${A},mag,l1a,norm-mago,20250101,20250101,v01-00,cdf,2025-01-02 03:04:05`);
    expect(csv[2]).toBe(`${NEWER_VERSION.file_path},mag,l1a,norm-mago,20250101,,v0001.00001,cdf,`);
    expect(csv[3]).toBe(`${REPOINTED.file_path},,,,,,v0002,,`);

    const table = formatTable(records);
    expect(table.startsWith('Instrument ')).toBe(true);
    const name = REPOINTED.file_path.split('/').at(-1) as string;
    const row = table.split('\n').find((line) => line.includes(name)) ?? '';
    // Every cell but the version and the file name is blank.
    expect(row.replace(name, '').trim()).toBe('v0002');
    expect(table).not.toMatch(/undefined|null/);
    expect(table.split('\n').find((line) => line.includes('_v0001.00001.cdf'))).toMatch(
      /mag\s+l1a\s+norm-mago\s+20250101\s+v0001\.00001/,
    );
    await client.close();
  });

  it('download by their path to that path below the data root', async () => {
    const dataDir = join(home, 'data');
    const client = createClient({
      url: 'http://api.test',
      dataDir,
      dispatcher: mixedService([REPOINTED]),
      env: {},
      configFile: join(home, 'none.json'),
    });
    const [record] = await client.query({ instrument: 'hi-45' });
    const [result] = await client.download(record as { file_path: string } as never);
    const local = join(dataDir, ...REPOINTED.file_path.split('/'));
    expect(result).toMatchObject({ status: 'downloaded', localPath: local, path: REPOINTED.file_path });
    expect(await readFile(local, 'utf8')).toBe('newer bytes');
    expect(resolveLocalPath(dataDir, REPOINTED.file_path)).toBe(local);
    await client.close();
  });

  it('a bare name of an unknown form still must follow the naming rules, and hostile paths are refused', async () => {
    const dataDir = join(home, 'data');
    expect(() => resolveLocalPath(dataDir, 'imap_mag_l1a_norm-mago_20250101_v0001.00001.cdf')).toThrow(
      ValidationError,
    );
    const client = createClient({
      url: 'http://api.test',
      dataDir,
      dispatcher: mixedService([]),
      env: {},
      configFile: join(home, 'none.json'),
    });
    for (const target of [
      'imap_mag_l1a_norm-mago_20250101_v0001.00001.cdf',
      '../outside/imap_v001.cdf',
      '/etc/imap_v001.cdf',
      'imap/mag/%2e%2e/x_v001.cdf',
      'imap/mag/l1a/x\u001b[2J_v001.cdf',
      // A known form in the wrong folders is a wrong path, not a newer form.
      `imap/mag/l1b/2024/12/${A.split('/').at(-1)}`,
    ]) {
      await expect(client.download(target)).rejects.toBeInstanceOf(ValidationError);
    }
    await client.close();
  });

  it.each([
    ['imap/../../etc/passwd_v001.cdf', /its file_path .* is unsafe \(it contains a '\.\.' segment\)/],
    ['/etc/imap_mag_v001.cdf', /is unsafe \(it is absolute/],
    [
      'imap/mag/x\u0007_v001.cdf',
      /is unsafe \(it contains a control character in the segment "x\\u0007_v001.cdf"\)/,
    ],
    ['imap/mag/%2e%2e/%2e%2e/x_v001.cdf', /is unsafe/],
  ])('a hostile record %j is still refused, whole answer and all', async (filePath, reason) => {
    const client = createClient({
      url: 'http://api.test',
      dispatcher: mixedService([SPEC_RECORD, { ...NEWER_VERSION, file_path: filePath }]),
      env: {},
      configFile: join(home, 'none.json'),
    });
    const error = await failure(client.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/refusing record 2: /);
    expect(error.message).toMatch(reason);
    await client.close();
  });

  it('a newer-form record whose fields are not text is refused, naming the field', async () => {
    const client = createClient({
      url: 'http://api.test',
      dispatcher: mixedService([{ ...NEWER_VERSION, version: 1 }]),
      env: {},
      configFile: join(home, 'none.json'),
    });
    await expect(client.query({ instrument: 'mag' })).rejects.toThrow(
      /record 1 is not a file record \(field version: /,
    );
    await client.close();
  });
});

describe("records of today's names are of known forms", () => {
  const SCIENCE_TODAY = { ...REPOINTED_RECORD, ingestion_date: '2025-01-02 03:04:05' };
  const MINOR_ONLY = {
    file_path: 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_v001.cdf',
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: '20250101',
    repointing: null,
    cr: null,
    version: 'v001',
    major_version: null,
    minor_version: 1,
    extension: 'cdf',
  };
  const CR_TODAY = {
    ...MINOR_ONLY,
    file_path: 'imap/glows/l3a/2025/01/imap_glows_l3a_hist_20250105-cr02291_v001.0000.cdf',
    instrument: 'glows',
    data_level: 'l3a',
    descriptor: 'hist',
    start_date: '20250105',
    cr: 2291,
    version: 'v001.0000',
    major_version: 1,
    minor_version: 0,
  };

  function todayClient(records: unknown[], table?: string) {
    const dispatcher = mixedService(records);
    const client = createClient({
      url: 'http://api.test',
      dispatcher,
      env: {},
      configFile: join(home, 'none.json'),
    });
    return {
      client,
      filters:
        table === 'ancillary' ? { table: 'ancillary' as const, instrument: 'mag' } : { instrument: 'hi' },
    };
  }

  let home: string;
  beforeAll(async () => {
    home = await makeTempDir('mission-today-forms-');
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  it('are kept without the newer-forms warning: science with a repointing, a CR or a minor-only version', async () => {
    const { client, filters } = todayClient([SCIENCE_TODAY, MINOR_ONLY, CR_TODAY]);
    const counts: number[] = [];
    const records = await client.query(filters, { onNewerForms: (count) => counts.push(count) });
    expect(records).toEqual([SCIENCE_TODAY, MINOR_ONLY, CR_TODAY]);
    expect(counts).toEqual([]);
    await client.close();
  });

  it('are kept without the warning: ancillary files versioned vNNN', async () => {
    const ancillary = {
      file_path: 'imap/ancillary/mag/imap_mag_l1b-cal_20250101_20250131_v002.cdf',
      instrument: 'mag',
      descriptor: 'l1b-cal',
      start_date: '20250101',
      end_date: '20250131',
      version: 'v002',
      extension: 'cdf',
    };
    const { client, filters } = todayClient([ancillary], 'ancillary');
    const counts: number[] = [];
    expect(await client.query(filters, { onNewerForms: (count) => counts.push(count) })).toEqual([ancillary]);
    expect(counts).toEqual([]);
    await client.close();
  });

  it.each([
    [
      'a field its kind carries is missing',
      { file_path: SCIENCE_TODAY.file_path, version: 'v002.0001' },
      /record 1 is not a file record \(field instrument: /,
    ],
    [
      'the repointing is not a number',
      { ...SCIENCE_TODAY, repointing: '12' },
      /record 1 is not a file record \(field repointing: /,
    ],
    [
      "its folders are not its name's",
      { ...SCIENCE_TODAY, file_path: SCIENCE_TODAY.file_path.replace('/l1b/', '/l1a/') },
      /refusing record 1: its file_path .* is not a valid storage path \(Invalid path .*the data level folder is "l1a"/,
    ],
    [
      'it is of a kind the table searched does not list',
      { ...MINOR_ONLY, file_path: 'imap/ancillary/mag/imap_mag_cal_20250101_v001.json' },
      /refusing record 1: its file_path .* is an ancillary file, not one the science table lists/,
    ],
  ])('are refused when %s', async (_why, record, message) => {
    const { client, filters } = todayClient([record]);
    const error = await failure(client.query(filters));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(message);
    await client.close();
  });
});
