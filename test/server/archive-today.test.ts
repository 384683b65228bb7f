/**
 * Today's archive on the reference server: every kind stored, listed and reindexed from the folder store;
 * `/query` with today's filters and records and `/spice-query` in the dialects `today` and `both`, while `spec`
 * stays the specification's service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../src/server/index.js';
import {
  expectWire,
  outcomeOf,
  putStoreFile,
  rawRequest,
  startTestServer,
  type TestServer,
  WIRE_MODE_LIST,
} from './helpers.js';

const QUERY_HEADERS = { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' };
const SPEC_VALID =
  'file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, table, ingestion_start_date, ingestion_end_date';
const SPICE_VALID =
  'type, start_date, end_date, start_ingest_date, end_ingest_date, version, latest, offset, limit';

const SPEC = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_20250107_v01-00.cdf';
const V1 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v001.0001.cdf';
const V2 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v001.0002.cdf';
const V3 = 'imap/swe/l1b/2025/01/imap_swe_l1b_sci_20250107_v002.0000.cdf';
const HI = 'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf';
const HI_NEXT = 'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00043_v001.0000.cdf';
const GLOWS = 'imap/glows/l3a/2025/01/imap_glows_l3a_lightcurve_20250110-cr02291_v000.0001.cdf';
const ANCILLARY = 'imap/ancillary/mag/imap_mag_calibration_20250101_20251231_v002.cdf';
const LSK1 = 'imap/spice/lsk/naif0011.tls';
const LSK2 = 'imap/spice/lsk/naif0012.tls';
const CK = 'imap/spice/ck/imap_2025_032_2025_034_003.ah.bc';
const SPK = 'imap/spice/spk/imap_pred_od025_20260303_20260414_v01.bsp';
const QUICKLOOK = 'imap/quicklook/mag/l1a/2025/01/imap_mag_l1a_norm_20250105_v001.0001.png';
const DEPENDENCY = 'imap/dependency/mag/l1a/2025/01/imap_mag_l1a_norm_20250105_v001.0001.json';
const RELEASE = 'imap/release/mag/imap_mag_data-release-001_20250101_20250331_v001.txt';

const STORED = [
  SPEC,
  V1,
  V2,
  V3,
  HI,
  HI_NEXT,
  GLOWS,
  ANCILLARY,
  LSK1,
  LSK2,
  CK,
  SPK,
  QUICKLOOK,
  DEPENDENCY,
  RELEASE,
];
const INGESTED = new Date('2025-03-01T12:00:00Z');

const servers = new Map<Dialect, TestServer>();

beforeAll(async () => {
  for (const dialect of ['spec', 'both', 'today'] as const) {
    const server = await startTestServer(
      { dialect, wire: 'gateway', apiKeys: ['key-one'], tokens: ['token-one'] },
      async (store) => {
        for (const key of STORED) await putStoreFile(store, key, key, INGESTED);
      },
    );
    servers.set(dialect, server);
  }
});
afterAll(async () => {
  for (const server of servers.values()) await server.cleanup();
});

const urlOf = (dialect: Dialect) => (servers.get(dialect) as TestServer).server.url;

async function get(dialect: Dialect, path: string, headers?: Record<string, string>) {
  return outcomeOf(await rawRequest(urlOf(dialect), path, headers ? { headers } : {}), 'gateway');
}

async function paths(dialect: Dialect, path: string): Promise<string[]> {
  const { statusCode, body } = await get(dialect, path);
  expect(statusCode).toBe(200);
  return (body as Array<{ file_path: string }>).map((record) => record.file_path);
}

async function refused(dialect: Dialect, path: string): Promise<string> {
  const { statusCode, body } = await get(dialect, path);
  expect(statusCode).toBe(400);
  return body as string;
}

describe('the folder store and the index hold every kind', () => {
  it('lists every kind at start, and --reindex adds files of every kind put in the store later', async () => {
    const test = await startTestServer({ wire: 'gateway' }, async (store) => {
      for (const key of STORED) await putStoreFile(store, key, key, INGESTED);
    });
    try {
      expect(test.server.objectCount).toBe(STORED.length);
      const later = [
        'imap/spice/sclk/imap_sclk_0012.tsc',
        'imap/quicklook/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.pdf',
        'imap/release/hi/imap_hi_data-release-002_20250101_20250331_v001.txt',
        'imap/dependency/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.json',
        'imap/ancillary/hi/imap_hi_esa-energies_20250101_v001.csv',
        'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00044_v001.0000.cdf',
        // In the wrong folder: skipped, with the folder it belongs in.
        'imap/spice/ck/naif0013.tls',
      ];
      for (const key of later) await putStoreFile(test.storeDir, key, key);
      const report = await test.server.reindex();
      expect(report.added).toBe(later.length - 1);
      expect(report.skipped).toEqual([
        {
          key: 'imap/spice/ck/naif0013.tls',
          problem: expect.stringContaining('imap/spice/lsk/naif0013.tls'),
        },
      ]);
      const found = async (path: string) =>
        (
          outcomeOf(await rawRequest(test.server.url, path), 'gateway').body as Array<{ file_path: string }>
        ).map((record) => record.file_path);
      expect(await found('/spice-query?type=spacecraft_clock')).toEqual([later[0]]);
      expect(await found('/query?instrument=hi&repointing=44')).toEqual([later[5]]);
    } finally {
      await test.cleanup();
    }
  });
});

describe.each(['both', 'today'] as const)('/query in dialect %s', (dialect) => {
  it("lists today's science records with their fields and no end_date; the specification's keep theirs", async () => {
    const { body } = await get(dialect, '/query?instrument=hi&repointing=42');
    expect(body).toEqual([
      {
        file_path: HI,
        instrument: 'hi',
        data_level: 'l3a',
        descriptor: 'ena-45',
        start_date: '20250105',
        repointing: 42,
        cr: null,
        version: 'v001.0002',
        major_version: 1,
        minor_version: 2,
        extension: 'cdf',
        ingestion_date: '2025-03-01 12:00:00',
      },
    ]);
    const [spec] = (await get(dialect, '/query?version=v01-00')).body as Array<Record<string, unknown>>;
    expect(Object.keys(spec ?? {})).toEqual([
      'file_path',
      'instrument',
      'data_level',
      'descriptor',
      'start_date',
      'end_date',
      'version',
      'extension',
      'ingestion_date',
    ]);
    const [ancillary] = (await get(dialect, '/query?table=ancillary')).body as Array<Record<string, unknown>>;
    expect(ancillary).toMatchObject({ file_path: ANCILLARY, end_date: '20251231', version: 'v002' });
  });

  it.each([
    ['repointing as a number', 'repointing=42', [HI]],
    ['repointing with leading zeros or its word', 'repointing=repoint00043', [HI_NEXT]],
    ['major_version, 1 = 001', 'instrument=swe&major_version=001', [V1, V2]],
    ['minor_version', 'minor_version=2', [HI, V2]],
    ['an exact vNNN.NNNN', 'version=v001.0002', [HI, V2]],
    ['an exact vXX-YY', 'instrument=swe&version=v01-00', [SPEC]],
    ['latest across both generations', 'instrument=swe&latest=true', [V3]],
    ['latest within a major version', 'instrument=swe&major_version=1&latest=true', [V2]],
    ['latest per repointing', 'instrument=hi&latest=true', [HI, HI_NEXT]],
    ["a level and instrument of today's", 'instrument=glows&data_level=l3a', [GLOWS]],
    ['only science: no quicklook or dependency file', 'instrument=mag', []],
  ])('%s', async (_, search, expected) => {
    expect(await paths(dialect, `/query?${search}`)).toEqual(expected);
  });

  it("refuses the tables it does not search, and today's filters on the ancillary table", async () => {
    expect(await refused(dialect, '/query?table=spice')).toBe(
      'The spice table is not searched at /query: ask GET /spice-query (e.g. /spice-query?type=leapseconds) for SPICE kernels.',
    );
    expect(await refused(dialect, '/query?table=release')).toBe(
      'Invalid table "release". Please choose from science, ancillary (SPICE kernels: GET /spice-query)',
    );
    expect(await refused(dialect, '/query?table=ancillary&major_version=1')).toBe(
      'The major_version filter does not apply to the ancillary table (it applies to science).',
    );
    expect(await refused(dialect, '/query?repointing=4.2')).toBe(
      'Invalid repointing "4.2". Please use a whole number of up to 5 digits (e.g. 42 or repoint00042).',
    );
  });
});

describe.each(['both', 'today'] as const)('/spice-query in dialect %s', (dialect) => {
  it.each([
    ['every kernel, by path', '', [CK, LSK1, LSK2, SPK]],
    ['a kernel type', 'type=leapseconds', [LSK1, LSK2]],
    ['latest=true per kernel series', 'type=leapseconds&latest=true', [LSK2]],
    ['a version, as digits', 'type=leapseconds&version=0011', [LSK1]],
    [
      'coverage overlapping the range; a kernel without dates matches any',
      'start_date=20250202&end_date=20250202',
      [CK, LSK1, LSK2],
    ],
    ['a range after every coverage', 'type=ephemeris_predicted&start_date=20260415', []],
    ['ingestion days', 'start_ingest_date=20250301&end_ingest_date=20250301&type=attitude_history', [CK]],
    ['ingestion days, none', 'end_ingest_date=20250228', []],
  ])('%s', async (_, search, expected) => {
    expect(await paths(dialect, `/spice-query${search ? `?${search}` : ''}`)).toEqual(expected);
  });

  it("answers the kernels' records: file name, type, coverage (null without dates), ingestion date, version", async () => {
    const { body } = await get(dialect, '/spice-query?type=attitude_history');
    expect(body).toEqual([
      {
        file_path: CK,
        file_name: 'imap_2025_032_2025_034_003.ah.bc',
        kernel_type: 'attitude_history',
        min_date_datetime: '2025-02-01T00:00:00',
        max_date_datetime: '2025-02-03T23:59:59',
        version: '003',
        extension: 'bc',
        ingestion_date: '2025-03-01 12:00:00',
      },
    ]);
    const [leapseconds] = (await get(dialect, '/spice-query?type=leapseconds')).body as Array<
      Record<string, unknown>
    >;
    expect(leapseconds).toMatchObject({ min_date_datetime: null, max_date_datetime: null });
  });

  it('answers under /api-key/ with the key and /authorized/ with the token, as /query', async () => {
    const key = await get(dialect, '/api-key/spice-query?type=leapseconds', { 'x-api-key': 'key-one' });
    expect(key.statusCode).toBe(200);
    expect((await get(dialect, '/api-key/spice-query?type=leapseconds')).statusCode).toBe(401);
    const token = await get(dialect, '/authorized/spice-query?type=leapseconds', {
      authorization: 'Bearer token-one',
    });
    expect(token.body).toEqual(key.body);
  });

  it.each([
    ['type=leapsecond', /^Invalid type "leapsecond"\. Please choose from attitude_history, /],
    [
      'colour=blue',
      `colour is not a valid spice-query parameter. Valid spice-query parameters are: ${SPICE_VALID}`,
    ],
    [
      'table=spice',
      `table is not a valid spice-query parameter. Valid spice-query parameters are: ${SPICE_VALID}`,
    ],
    ['start_date=2025-01-01', 'Invalid start_date "2025-01-01". Please use YYYYMMDD format.'],
    ['start_ingest_date=20251301', 'Invalid start_ingest_date "20251301". Please use YYYYMMDD format.'],
    [
      'version=latest',
      `Invalid version "latest". A kernel's version is its digits (e.g. 0012); ask latest=true for the newest.`,
    ],
    ['latest=yes', 'Invalid latest "yes". Please use true or false.'],
    ['type=spin&type=repoint', 'The query parameter type is given more than once; give it once.'],
  ])('400 for %s', async (search, message) => {
    const body = await refused(dialect, `/spice-query?${search}`);
    if (typeof message === 'string') expect(body).toBe(message);
    else expect(body).toMatch(message);
  });
});

describe("dialect spec stays the specification's service", () => {
  it.each(['/spice-query?type=leapseconds', '/api-key/spice-query', '/authorized/spice-query'])(
    '%s is no route',
    async (path) => {
      const { statusCode, body } = await get('spec', path);
      expect(statusCode).toBe(404);
      expect(body).toBe(
        `Not found: there is no route ${path.split('?')[0]}. Routes are GET /upload/{filepath}, GET /download/{filepath} and GET /query.`,
      );
    },
  );

  it.each(['repointing=42', 'major_version=1', 'minor_version=1', 'type=leapseconds', 'latest=true'])(
    "today's %s is an unknown parameter",
    async (search) => {
      const name = search.slice(0, search.indexOf('='));
      expect(await refused('spec', `/query?${search}`)).toBe(
        `${name} is not a valid query parameter. Valid query parameters are: ${SPEC_VALID}`,
      );
    },
  );

  it("refuses today's words and versions with the specification's messages", async () => {
    expect(await refused('spec', '/query?instrument=hi')).toBe(
      'Invalid instrument. Please choose from ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi',
    );
    expect(await refused('spec', '/query?data_level=l3a')).toBe(
      'Invalid data level. Please choose from l0, l1, l1a, l1b, l1c, l1d, l2',
    );
    expect(await refused('spec', '/query?version=v001.0001')).toBe(
      'Invalid version "v001.0001". Please use vxx-xx format or latest.',
    );
    expect(await refused('spec', '/query?table=spice')).toBe(
      'Invalid table "spice". Please choose from science, ancillary',
    );
  });
});

describe.each(WIRE_MODE_LIST)('/spice-query in wire mode %s', (wire) => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer({ wire }, async (store) => {
      await putStoreFile(store, LSK2, 'kernel', INGESTED);
    });
  });
  afterAll(() => test.cleanup());

  it('answers as /query does: a JSON array in the wire mode, a 400 with the problem', async () => {
    const [record] = outcomeOf(await rawRequest(test.server.url, '/spice-query?type=leapseconds'), wire)
      .body as unknown[];
    expectWire(await rawRequest(test.server.url, '/spice-query?type=leapseconds'), wire, {
      statusCode: 200,
      headers: QUERY_HEADERS,
      body: [record],
    });
    expect(record).toMatchObject({ file_path: LSK2, file_name: 'naif0012.tls' });
    expectWire(await rawRequest(test.server.url, '/spice-query?version=x'), wire, {
      statusCode: 400,
      headers: QUERY_HEADERS,
      body: `Invalid version "x". A kernel's version is its digits (e.g. 0012); ask latest=true for the newest.`,
    });
  });
});
