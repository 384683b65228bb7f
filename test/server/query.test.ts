/** Query semantics: filters, date boundaries, ingestion days in UTC, `latest`, ancillary, order. */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  outcomeOf,
  putStoreFile,
  rawRequest,
  startTestServer,
  type TestServer,
  WIRE_MODE_LIST,
} from './helpers.js';

const A = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const B = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-01.cdf';
const C = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v02-00.cdf';
const D = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250131_20250201_v01-00.cdf';
const E = 'imap/mag/l1a/2025/02/imap_mag_l1a_burst-magi_20250201_20250201_v01-00.cdf';
const F = 'imap/mag/l1a/2025/02/imap_mag_l1a_burst-magi_20250201_20250201_v01-10.cdf';
const G = 'imap/mag/l1a/2025/02/imap_mag_l1a_burst-magi_20250201_20250201_v01-09.cdf';
const H = 'imap/mag/l0/2025/01/imap_mag_l0_raw_20250115_20250115_v01-00.pkts';
const I = 'imap/mag/l2/2025/02/imap_mag_l2_norm_20250215_20250215_v01-00.cdf';
const J = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250120_20250120_v01-00.cdf';
const K = 'imap/swe/l0/2025/02/imap_swe_l0_raw_20250228_20250228_v01-00.pkts';
const L = 'imap/codice/l1a/2025/01/imap_codice_l1a_norm-mago_20250101_20250101_v03-00.cdf';
const M = 'imap/ancillary/mag/imap_mag_calibration_20250101_20250630_v01-00.cdf';
const N = 'imap/ancillary/mag/imap_mag_calibration_20250101_20250630_v01-01.cdf';
const O = 'imap/ancillary/swe/imap_swe_lookup-table_20250110_v01-00.csv';

/** Each file and its ingestion time (the file's mtime). */
const FILES: ReadonlyArray<readonly [string, string]> = [
  [A, '2025-01-02T10:00:00Z'],
  [B, '2025-01-05T23:59:59Z'],
  [C, '2025-01-06T00:00:00Z'],
  [D, '2025-02-02T12:00:00Z'],
  [E, '2025-02-02T12:00:00Z'],
  [F, '2025-02-03T00:00:00Z'],
  [G, '2025-02-04T00:00:00Z'],
  [H, '2025-01-16T00:00:00Z'],
  [I, '2025-02-16T08:00:00Z'],
  [J, '2025-01-21T00:00:00Z'],
  [K, '2025-03-01T00:00:00Z'],
  [L, '2025-01-03T00:00:00Z'],
  [M, '2025-01-01T00:00:00Z'],
  [N, '2025-01-10T00:00:00Z'],
  [O, '2025-01-11T00:00:00Z'],
];

let test: TestServer;
let previousTz: string | undefined;

async function prepare(store: string): Promise<void> {
  for (const [key, ingested] of FILES) await putStoreFile(store, key, key, new Date(ingested));
  // None of these is a stored file of the layout: the index must skip every one.
  await writeFile(join(store, '.hidden'), 'x');
  await putStoreFile(store, 'imap/mag/l1a/2025/01/.imap_mag_l1a_norm-mago_20250102_20250102_v01-00.cdf');
  await putStoreFile(store, 'imap/mag/l1a/2025/01/notes.txt');
  await putStoreFile(store, 'imap/mag/l1a/2024/12/imap_mag_l1a_norm-mago_20250105_20250105_v01-00.cdf');
  await putStoreFile(store, 'imap_mag_l1a_norm-mago_20250106_20250106_v01-00.cdf');
  await putStoreFile(store, 'imap/mag/l1a/imap_mag_l1a_norm-mago_20250108_20250108_v01-00.cdf');
  await mkdir(join(store, '.incoming'), { recursive: true });
  await writeFile(join(store, '.incoming', 'abc.part'), 'partial');
  // Any system: Windows makes it for an administrator or in developer mode, as on the CI's runners.
  await symlink(
    join(store, ...A.split('/')),
    join(store, 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250107_20250107_v01-00.cdf'),
  );
}

beforeAll(async () => {
  // A zone far from UTC: ingestion days must still be UTC days.
  previousTz = process.env.TZ;
  process.env.TZ = 'Pacific/Kiritimati';
  test = await startTestServer({}, prepare);
});
afterAll(async () => {
  if (previousTz === undefined) delete process.env.TZ;
  else process.env.TZ = previousTz;
  await test.cleanup();
});

async function records(search: string): Promise<Array<Record<string, unknown>>> {
  const result = await rawRequest(test.server.url, `/query?${search}`);
  const { statusCode, body } = outcomeOf(result, 'envelope');
  expect(statusCode).toBe(200);
  return body as Array<Record<string, unknown>>;
}

async function paths(search: string): Promise<string[]> {
  return (await records(search)).map((record) => record.file_path as string);
}

describe('records', () => {
  it('carry the SPEC fields and ingestion_date (YYYY-MM-DD HH:MM:SS, UTC)', async () => {
    expect(await records(`file_path=${B}`)).toEqual([
      {
        file_path: B,
        instrument: 'mag',
        data_level: 'l1a',
        descriptor: 'norm-mago',
        start_date: '20250101',
        end_date: '20250101',
        version: 'v01-01',
        extension: 'cdf',
        ingestion_date: '2025-01-05 23:59:59',
      },
    ]);
  });

  it('ancillary records have no data_level; a single-date name has a null end_date', async () => {
    expect(await records('table=ancillary')).toEqual([
      {
        file_path: M,
        instrument: 'mag',
        descriptor: 'calibration',
        start_date: '20250101',
        end_date: '20250630',
        version: 'v01-00',
        extension: 'cdf',
        ingestion_date: '2025-01-01 00:00:00',
      },
      {
        file_path: N,
        instrument: 'mag',
        descriptor: 'calibration',
        start_date: '20250101',
        end_date: '20250630',
        version: 'v01-01',
        extension: 'cdf',
        ingestion_date: '2025-01-10 00:00:00',
      },
      {
        file_path: O,
        instrument: 'swe',
        descriptor: 'lookup-table',
        start_date: '20250110',
        end_date: null,
        version: 'v01-00',
        extension: 'csv',
        ingestion_date: '2025-01-11 00:00:00',
      },
    ]);
  });
});

describe('each filter alone', () => {
  it.each([
    [
      'table=science (everything, ordered by file_path)',
      'table=science',
      [L, H, A, B, C, D, E, G, F, I, K, J],
    ],
    ['instrument', 'instrument=mag', [H, A, B, C, D, E, G, F, I]],
    ['data_level', 'data_level=l1a', [L, A, B, C, D, E, G, F]],
    ['descriptor', 'descriptor=norm-mago', [L, A, B, C, D]],
    ['start_date (start on or after, inclusive)', 'start_date=20250131', [D, E, G, F, I, K]],
    [
      'end_date (start on or before, inclusive; the end date does not count)',
      'end_date=20250131',
      [L, H, A, B, C, D, J],
    ],
    ['version', 'version=v01-00', [H, A, D, E, I, K, J]],
    ['extension', 'extension=pkts', [H, K]],
    [
      'ingestion_start_date (whole UTC days, inclusive)',
      'ingestion_start_date=20250106',
      [H, C, D, E, G, F, I, K, J],
    ],
    ['ingestion_end_date (23:59:59 UTC still counts)', 'ingestion_end_date=20250105', [L, A, B]],
    ['file_path', `file_path=${D}`, [D]],
    ['file_path of a file in the other table', `file_path=${M}`, []],
  ])('%s', async (_, search, expected) => {
    expect(await paths(search)).toEqual(expected);
  });
});

describe('filters together (AND)', () => {
  it.each([
    ['date range, both ends inclusive', 'start_date=20250115&end_date=20250131', [H, D, J]],
    ['a single start day', 'start_date=20250101&end_date=20250101', [L, A, B, C]],
    [
      'instrument + level + date range',
      'instrument=mag&data_level=l1a&start_date=20250101&end_date=20250131',
      [A, B, C, D],
    ],
    [
      'every science filter',
      'instrument=mag&data_level=l1a&descriptor=norm-mago&start_date=20250101&end_date=20250101&version=v01-01&extension=cdf&ingestion_start_date=20250105&ingestion_end_date=20250105',
      [B],
    ],
    ['one ingestion day', 'ingestion_start_date=20250105&ingestion_end_date=20250105', [B]],
    ['the UTC day of midnight', 'ingestion_start_date=20250106&ingestion_end_date=20250106', [C]],
    ['ancillary + instrument', 'table=ancillary&instrument=swe', [O]],
    ['ancillary + extension', 'table=ancillary&extension=csv', [O]],
    ['ancillary + file_path', `table=ancillary&file_path=${M}`, [M]],
    ['nothing matching: 200 []', 'instrument=mag&data_level=l2&start_date=20250301', []],
    ['an empty table', 'instrument=idex', []],
  ])('%s', async (_, search, expected) => {
    expect(await paths(search)).toEqual(expected);
  });
});

describe('version=latest', () => {
  it.each([
    [
      'per instrument, level, descriptor and start date; numeric (v01-10 > v01-09)',
      'instrument=mag&version=latest',
      [H, C, D, F, I],
    ],
    ['over the whole table', 'version=latest', [L, H, C, D, F, I, K, J]],
    ['a series of another instrument stays apart', 'descriptor=norm-mago&version=latest', [L, C, D]],
    [
      'among the rows that pass the other filters',
      'instrument=mag&version=latest&ingestion_end_date=20250105',
      [B],
    ],
    ['with a date range', 'version=latest&start_date=20250201&end_date=20250201', [F]],
    ['ancillary', 'table=ancillary&version=latest', [N, O]],
  ])('%s', async (_, search, expected) => {
    expect(await paths(search)).toEqual(expected);
  });
});

describe.each(WIRE_MODE_LIST)('the same answer in wire mode %s', (mode) => {
  let other: TestServer;
  beforeAll(async () => {
    other = await startTestServer({ wire: mode }, prepare);
  });
  afterAll(() => other.cleanup());

  it('instrument=mag&version=latest', async () => {
    const result = await rawRequest(other.server.url, '/query?instrument=mag&version=latest');
    const body = outcomeOf(result, mode).body as Array<{ file_path: string }>;
    expect(body.map((record) => record.file_path)).toEqual([H, C, D, F, I]);
    expect(body).toEqual(await records('instrument=mag&version=latest'));
  });
});
