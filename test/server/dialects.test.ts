/**
 * The reference server's dialects, today's service beside the specification's (`spec`, `today` and `both`):
 * `latest=true`, paging, the `/api-key/` and `/authorized/` routes, HEAD downloads and both forms of 409, in
 * every wire mode.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { type Dialect, type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import type { WireMode } from '../../src/server/wire.js';
import {
  eventually,
  expectWire,
  type HttpResult,
  makeTempDir,
  outcomeOf,
  putStoreFile,
  rawRequest,
  startTestServer,
  TEST_SECRET,
  type TestServer,
  WIRE_MODE_LIST,
} from './helpers.js';

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const QUERY_HEADERS = { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' };
const SPEC_VALID =
  'file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, table, ingestion_start_date, ingestion_end_date';
const TODAY_VALID = `${SPEC_VALID}, repointing, major_version, minor_version, latest, offset, limit`;
const DIALECT_LIST: readonly Dialect[] = ['both', 'spec', 'today'];

const API_KEYS = ['key-one', 'key-two'];
const TOKENS = ['token-one', 'token-two'];

const STORED = 'imap/swe/l0/2025/02/imap_swe_l0_raw_20250203_20250203_v01-00.pkts';
const NEW_NAME = 'imap_mag_l2_norm_20250301_20250301_v01-00.cdf';

const MESSAGES = {
  missingKey: 'Missing X-api-key header: this server needs an API key for uploads.',
  missingKeyRoute: 'Missing X-api-key header: this server needs an API key on /api-key/ routes.',
  wrongKey: 'Forbidden: the X-api-key given is not valid for this server.',
  missingToken: 'Missing bearer token: /authorized/ routes need an Authorization: Bearer <token> header.',
  wrongToken: 'Forbidden: the bearer token given is not valid for this server.',
  noTokens:
    'Forbidden: this server accepts no bearer tokens; start it with tokens (serve --token) to use /authorized/ routes.',
  latestTwice: 'Give either latest=true or version=latest, not both: they ask for the same thing.',
  versionLatest:
    'Invalid version "latest": this service takes latest=true for the most recent versions. Please use vNNN.NNNN, vNNN or vxx-xx format.',
  fileExists: (key: string) =>
    `The file '${key}' already exists. Stored files are never replaced: upload a changed file under a new version.`,
};

const ROUTE_LISTS: Record<Dialect, string> = {
  spec: 'Routes are GET /upload/{filepath}, GET /download/{filepath} and GET /query.',
  both: 'Routes are GET /upload/{filepath}, GET or HEAD /download/{filepath}, GET /query and GET /spice-query, each also under /api-key/ and /authorized/.',
  today:
    'Routes are GET /api-key/upload/{filepath}, GET or HEAD /download/{filepath}, GET /query and GET /spice-query; the last three also under /api-key/ and /authorized/.',
};

/** The 404 of a path (its query string left out, as the server names only the path). */
function notFoundBody(path: string, dialect: Dialect): string {
  return `Not found: there is no route ${path.split('?')[0]}. ${ROUTE_LISTS[dialect]}`;
}

type Row = Record<string, unknown> & { file_path: string };

async function queryRows(base: string, mode: WireMode, search: string): Promise<Row[]> {
  const { statusCode, body } = outcomeOf(await rawRequest(base, `/query?${search}`), mode);
  expect(statusCode).toBe(200);
  return body as Row[];
}

const DAY_MS = 86_400_000;
const INSTRUMENTS = [
  'mag',
  'swe',
  'codice',
  'hit',
  'glows',
  'idex',
  'lo',
  'swapi',
  'ultra-45',
  'ultra-90',
  'hi-45',
];

/**
 * Writes `count` empty science files (11 instruments, 3 levels, 2 descriptors a day from 2024-01-01, a second
 * version for one product in three) with ingestion days spread over 40 days from 2025-01-01, and returns their
 * keys. Synchronous writes: tens of thousands of promises would be slower.
 */
function writeLargeStore(storeDir: string, count: number): string[] {
  const keys: string[] = [];
  for (let day = 0; keys.length < count; day += 1) {
    const date = new Date(Date.UTC(2024, 0, 1) + day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
    for (const instrument of INSTRUMENTS) {
      for (const level of ['l1a', 'l1b', 'l2']) {
        for (const descriptor of ['sci', 'burst']) {
          const versions = keys.length % 3 === 0 ? ['v01-00', 'v02-00'] : ['v01-00'];
          for (const version of versions) {
            if (keys.length === count) break;
            const name = `imap_${instrument}_${level}_${descriptor}_${date}_${date}_${version}.cdf`;
            keys.push(`imap/${instrument}/${level}/${date.slice(0, 4)}/${date.slice(4, 6)}/${name}`);
          }
        }
      }
    }
  }
  const made = new Set<string>();
  for (const [i, key] of keys.entries()) {
    const path = join(storeDir, ...key.split('/'));
    const folder = dirname(path);
    if (!made.has(folder)) {
      mkdirSync(folder, { recursive: true });
      made.add(folder);
    }
    writeFileSync(path, '');
    const ingested = new Date(Date.UTC(2025, 0, 1, 12) + (i % 40) * DAY_MS);
    utimesSync(path, ingested, ingested);
  }
  return keys;
}

describe('paging through 25,000 records', () => {
  const COUNT = 25_000;
  let root: string;
  let keys: string[];
  const servers = new Map<WireMode, ReferenceServer>();

  beforeAll(async () => {
    root = await makeTempDir();
    keys = writeLargeStore(join(root, 'store'), COUNT);
    for (const mode of WIRE_MODE_LIST) {
      servers.set(
        mode,
        await startReferenceServer({ store: join(root, 'store'), secret: TEST_SECRET, wire: mode }),
      );
    }
    // 25,000 files written and listed three times: on two cores shared with the backend tests this has
    // taken over 30 s.
  }, 120_000);
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
    await rm(root, { recursive: true, force: true });
  });

  describe.each(WIRE_MODE_LIST)('wire mode %s', (mode) => {
    const base = () => servers.get(mode)?.url as string;

    it('pages of 1,000 concatenate to exactly the unpaged answer, in file_path order', async () => {
      const whole = await queryRows(base(), mode, 'table=science');
      expect(whole).toHaveLength(COUNT);
      expect(whole.map((row) => row.file_path)).toEqual([...keys].sort());
      const paged: Row[] = [];
      for (let offset = 0; offset < COUNT; offset += 1000) {
        const page = await queryRows(base(), mode, `table=science&offset=${offset}&limit=1000`);
        expect(page).toHaveLength(1000);
        paged.push(...page);
      }
      expect(paged).toEqual(whole);
      expect(await queryRows(base(), mode, `table=science&offset=${COUNT}&limit=1000`)).toEqual([]);
    });

    it('pages come after the filters and latest=true: small pages concatenate to the unpaged answer', async () => {
      const search = 'instrument=mag&latest=true&ingestion_start_date=20250110&ingestion_end_date=20250130';
      const whole = await queryRows(base(), mode, search);
      expect(whole.length).toBeGreaterThan(100);
      // A page size that leaves a short last page.
      const size = [7, 8, 9].find((n) => whole.length % n !== 0) as number;
      expect(whole.every((row) => row.instrument === 'mag')).toBe(true);
      // latest=true left one version per series.
      const series = whole.map((row) => row.file_path.replace(/_v\d\d-\d\d\.cdf$/, ''));
      expect(new Set(series).size).toBe(whole.length);
      const paged: Row[] = [];
      for (let offset = 0; offset < whole.length; offset += size) {
        paged.push(...(await queryRows(base(), mode, `${search}&offset=${offset}&limit=${size}`)));
      }
      expect(paged).toEqual(whole);
    });

    it('offset alone skips the first records; limit alone takes the first; limit=10000 is allowed', async () => {
      const whole = await queryRows(base(), mode, 'table=science');
      expect(await queryRows(base(), mode, `table=science&offset=${COUNT - 10}`)).toEqual(whole.slice(-10));
      expect(await queryRows(base(), mode, 'table=science&limit=5')).toEqual(whole.slice(0, 5));
      expect(await queryRows(base(), mode, 'table=science&offset=20000&limit=10000')).toEqual(
        whole.slice(20000),
      );
    });
  });
});

/** A small store: three versions of one series, another series, and one more instrument. */
const A = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const B = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-01.cdf';
const C = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v02-00.cdf';
const D = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250131_20250201_v01-00.cdf';

async function smallStore(storeDir: string): Promise<void> {
  for (const key of [A, B, C, D, STORED]) await putStoreFile(storeDir, key, key);
}

/**
 * One server per dialect, in wire mode `mode` (with `options`), started before the tests of the enclosing
 * `describe` and stopped after them; the function gives the base URL of a dialect's server.
 */
function serverPerDialect(
  mode: WireMode,
  options: { apiKeys?: string[]; tokens?: string[] } = {},
): (dialect: Dialect) => string {
  const servers = new Map<Dialect, TestServer>();
  beforeAll(async () => {
    for (const dialect of DIALECT_LIST) {
      servers.set(dialect, await startTestServer({ wire: mode, dialect, ...options }, smallStore));
    }
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.cleanup();
  });
  return (dialect) => servers.get(dialect)?.server.url as string;
}

describe.each(WIRE_MODE_LIST)('query parameters by dialect, wire mode %s', (mode) => {
  const base = serverPerDialect(mode);
  const paths = async (dialect: Dialect, search: string) =>
    (await queryRows(base(dialect), mode, search)).map((row) => row.file_path);
  const expect400 = async (dialect: Dialect, search: string, message: string) =>
    expectWire(await rawRequest(base(dialect), `/query?${search}`), mode, {
      statusCode: 400,
      headers: QUERY_HEADERS,
      body: message,
    });

  it('latest=true answers exactly what version=latest answers (both, the default)', async () => {
    expect(await paths('both', 'instrument=mag&version=latest')).toEqual([C, D]);
    for (const search of [
      'instrument=mag&latest=true',
      'latest=true&instrument=mag',
      'instrument=mag&latest=True',
    ]) {
      expect(await queryRows(base('both'), mode, search)).toEqual(
        await queryRows(base('both'), mode, 'instrument=mag&version=latest'),
      );
    }
    expect(await paths('both', 'latest=TRUE')).toEqual([C, D, STORED]);
  });

  it('latest=false changes nothing, also beside a version', async () => {
    expect(await paths('both', 'instrument=mag&latest=false')).toEqual([A, B, C, D]);
    expect(await paths('both', 'instrument=mag&version=v01-01&latest=false')).toEqual([B]);
  });

  it.each([
    ['version=latest&latest=true', MESSAGES.latestTwice],
    ['latest=false&version=latest', MESSAGES.latestTwice],
    [
      'instrument=mag&version=v01-01&latest=true',
      'Give either latest=true or a version, not both: latest=true asks for the most recent version of each file.',
    ],
    ['instrument=mag&latest=yes', 'Invalid latest "yes". Please use true or false.'],
    ['instrument=mag&latest=', 'Invalid latest "". Please use true or false.'],
    ['latest=true&latest=true', 'The query parameter latest is given more than once; give it once.'],
  ])('both: 400 for %s', async (search, message) => {
    await expect400('both', search, message);
  });

  it('version=latest: spec and both answer it; today refuses it, naming the parameter, and answers latest=true', async () => {
    expect(await paths('spec', 'instrument=mag&version=latest')).toEqual([C, D]);
    expect(await paths('both', 'instrument=mag&version=latest')).toEqual([C, D]);
    await expect400('today', 'instrument=mag&version=latest', MESSAGES.versionLatest);
    expect(await paths('today', 'instrument=mag&latest=true')).toEqual([C, D]);
    expect(await paths('today', 'instrument=mag&version=v01-00')).toEqual([A, D]);
  });

  it.each([
    ['latest=true', [C, D]],
    ['offset=1', [B, C, D]],
    ['limit=2', [A, B]],
  ] as const)(
    '%s: both and today accept it; in spec it is an unknown parameter, named in a 400',
    async (extra, expected) => {
      expect(await paths('both', `instrument=mag&${extra}`)).toEqual(expected);
      expect(await paths('today', `instrument=mag&${extra}`)).toEqual(expected);
      const name = extra.slice(0, extra.indexOf('='));
      await expect400(
        'spec',
        `instrument=mag&${extra}`,
        `${name} is not a valid query parameter. Valid query parameters are: ${SPEC_VALID}`,
      );
    },
  );

  it("messages list the parameters of the dialect: the specification's in spec, with today's filters, latest, offset and limit in both and today", async () => {
    for (const [dialect, valid] of [
      ['spec', SPEC_VALID],
      ['both', TODAY_VALID],
      ['today', TODAY_VALID],
    ] as const) {
      await expect400(
        dialect,
        'colour=blue',
        `colour is not a valid query parameter. Valid query parameters are: ${valid}`,
      );
      await expect400(
        dialect,
        '',
        `Give at least one query parameter, e.g. /query?instrument=mag. Valid query parameters are: ${valid}`,
      );
    }
  });

  describe.each(['both', 'today'] as const)('limits of offset and limit (%s)', (dialect) => {
    it.each([
      ['offset=-1', 'Invalid offset "-1": it is negative. Please use a whole number, 0 or more.'],
      ['offset=1.5', 'Invalid offset "1.5": it is not a whole number. Please use a whole number, 0 or more.'],
      ['offset=ten', 'Invalid offset "ten": it is not a whole number. Please use a whole number, 0 or more.'],
      ['offset=', 'Invalid offset "": it is not a whole number. Please use a whole number, 0 or more.'],
      [
        'offset=99999999999999999999',
        'Invalid offset "99999999999999999999": it is too large. Please use a whole number, 0 or more.',
      ],
      [
        'limit=0',
        'Invalid limit "0": a page holds at least 1 record. Please use a whole number from 1 to 10000.',
      ],
      ['limit=-5', 'Invalid limit "-5": it is negative. Please use a whole number from 1 to 10000.'],
      [
        'limit=2.5',
        'Invalid limit "2.5": it is not a whole number. Please use a whole number from 1 to 10000.',
      ],
      [
        'limit=1e3',
        'Invalid limit "1e3": it is not a whole number. Please use a whole number from 1 to 10000.',
      ],
      [
        'limit=10001',
        'Invalid limit "10001": a page holds at most 10000 records. Please use a whole number from 1 to 10000. Page through more with offset.',
      ],
      ['limit=5&limit=6', 'The query parameter limit is given more than once; give it once.'],
    ])('400 for %s', async (paging, message) => {
      await expect400(dialect, `instrument=mag&${paging}`, message);
    });
  });
});

/** Every route of every access, and where each dialect serves it. */
const ACCESS_ROUTES = {
  upload: `upload/${NEW_NAME}`,
  download: `download/${STORED}`,
  query: 'query?instrument=swe',
} as const;
type RouteName = keyof typeof ACCESS_ROUTES;
const SUCCESS: Record<RouteName, number> = { upload: 200, download: 302, query: 200 };
const SERVED: Record<Dialect, readonly string[]> = {
  both: [
    '/upload',
    '/download',
    '/query',
    '/api-key/upload',
    '/api-key/download',
    '/api-key/query',
    '/authorized/upload',
    '/authorized/download',
    '/authorized/query',
  ],
  spec: ['/upload', '/download', '/query'],
  today: [
    '/download',
    '/query',
    '/api-key/upload',
    '/api-key/download',
    '/api-key/query',
    '/authorized/download',
    '/authorized/query',
  ],
};
const ROUTE_NAMES = Object.keys(ACCESS_ROUTES) as RouteName[];

const ACCESSES = [
  ['plain', ''],
  ['api-key', '/api-key'],
  ['authorized', '/authorized'],
] as const;

describe.each(WIRE_MODE_LIST)('credentials, wire mode %s', (mode) => {
  const base = serverPerDialect(mode, { apiKeys: API_KEYS, tokens: TOKENS });
  const get = (dialect: Dialect, path: string, headers: Record<string, string> = {}) =>
    rawRequest(base(dialect), path, { headers });
  const refused = (
    result: HttpResult,
    statusCode: number,
    body: string,
    headers: Record<string, string> = TEXT,
  ) => expectWire(result, mode, { statusCode, headers, body });
  const succeeds = (result: HttpResult, route: RouteName) =>
    expect(outcomeOf(result, mode).statusCode).toBe(SUCCESS[route]);

  /** The plain route: uploads need the key (the server has keys), downloads and queries are public. */
  async function checkPlain(dialect: Dialect, route: RouteName, path: string): Promise<void> {
    if (route !== 'upload') {
      succeeds(await get(dialect, path), route);
      return;
    }
    refused(await get(dialect, path), 401, MESSAGES.missingKey);
    refused(await get(dialect, path, { Authorization: 'Bearer token-one' }), 401, MESSAGES.missingKey);
    succeeds(await get(dialect, path, { 'X-api-key': 'key-two' }), route);
  }

  /** `/api-key/`: 401 without the key (a token does not stand in), 403 with a wrong one, success with either key. */
  async function checkApiKey(dialect: Dialect, route: RouteName, path: string): Promise<void> {
    const missing = route === 'upload' ? MESSAGES.missingKey : MESSAGES.missingKeyRoute;
    refused(await get(dialect, path), 401, missing);
    refused(await get(dialect, path, { Authorization: 'Bearer token-one' }), 401, missing);
    for (const wrong of ['key-on', 'KEY-ONE', 'key-onee', 'token-one']) {
      refused(await get(dialect, path, { 'X-api-key': wrong }), 403, MESSAGES.wrongKey);
    }
    for (const key of API_KEYS) succeeds(await get(dialect, path, { 'X-api-key': key }), route);
  }

  /** `/authorized/`: 401 with `WWW-Authenticate: Bearer` without a bearer token, 403 with a wrong one, success with either. */
  async function checkToken(dialect: Dialect, route: RouteName, path: string): Promise<void> {
    const withoutToken: Array<Record<string, string>> = [
      {},
      { 'X-api-key': 'key-one' },
      { Authorization: 'Basic dXNlcjpwYXNz' },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer ' },
      { Authorization: 'token-one' },
    ];
    for (const headers of withoutToken) {
      const result = await get(dialect, path, headers);
      refused(result, 401, MESSAGES.missingToken, { ...TEXT, 'WWW-Authenticate': 'Bearer' });
      if (mode !== 'envelope-200') expect(result.headers['www-authenticate']).toBe('Bearer');
    }
    for (const wrong of ['token-on', 'TOKEN-ONE', 'token-onee', 'key-one']) {
      refused(await get(dialect, path, { Authorization: `Bearer ${wrong}` }), 403, MESSAGES.wrongToken);
    }
    for (const authorization of ['Bearer token-one', 'Bearer token-two', 'bearer token-one']) {
      succeeds(await get(dialect, path, { Authorization: authorization }), route);
    }
  }

  it.each(ROUTE_NAMES)(
    '%s in each dialect: the plain route, /api-key/ with X-api-key, /authorized/ with a bearer token, or a 404 where the dialect has no such route',
    async (route) => {
      for (const dialect of DIALECT_LIST) {
        for (const [access, prefix] of ACCESSES) {
          const path = `${prefix}/${ACCESS_ROUTES[route]}`;
          if (!SERVED[dialect].includes(`${prefix}/${route}`)) {
            // Credentials do not open a route the dialect does not have.
            const all = { 'X-api-key': 'key-one', Authorization: 'Bearer token-one' };
            refused(await get(dialect, path, all), 404, notFoundBody(path, dialect));
          } else if (access === 'plain') await checkPlain(dialect, route, path);
          else if (access === 'api-key') await checkApiKey(dialect, route, path);
          else await checkToken(dialect, route, path);
        }
      }
    },
  );

  describe('a server without keys or tokens', () => {
    let test: TestServer;
    beforeAll(async () => {
      test = await startTestServer({ wire: mode }, smallStore);
    });
    afterAll(() => test.cleanup());

    it('/api-key/ routes need no key; /authorized/ routes refuse every token', async () => {
      const url = test.server.url;
      expect(outcomeOf(await rawRequest(url, '/api-key/query?instrument=swe'), mode).statusCode).toBe(200);
      expect(outcomeOf(await rawRequest(url, `/api-key/upload/${NEW_NAME}`), mode).statusCode).toBe(200);
      expectWire(await rawRequest(url, '/authorized/query?instrument=swe'), mode, {
        statusCode: 401,
        headers: { ...TEXT, 'WWW-Authenticate': 'Bearer' },
        body: MESSAGES.missingToken,
      });
      expectWire(
        await rawRequest(url, '/authorized/query?instrument=swe', {
          headers: { Authorization: 'Bearer anything' },
        }),
        mode,
        { statusCode: 403, headers: TEXT, body: MESSAGES.noTokens },
      );
    });
  });
});

describe.each(WIRE_MODE_LIST)('HEAD /download, wire mode %s', (mode) => {
  const base = serverPerDialect(mode, { apiKeys: API_KEYS, tokens: TOKENS });
  const sameAnswerWithoutBody = (head: HttpResult, get: HttpResult) => {
    expect(head.status).toBe(get.status);
    expect(head.body.length).toBe(0);
    expect(get.body.length).toBeGreaterThan(0);
    for (const name of [
      'content-type',
      'content-length',
      'access-control-allow-origin',
      'allow',
      'www-authenticate',
    ]) {
      expect(head.headers[name]).toBe(get.headers[name]);
    }
    // The signed URL carries its expiry in seconds, so compare where it points rather than the whole URL.
    const where = (url: string | undefined) => {
      if (url === undefined) return undefined;
      const parsed = new URL(url);
      return `${parsed.origin}${parsed.pathname} ${parsed.searchParams.get('X-Method')}`;
    };
    expect(where(head.headers.location)).toBe(where(get.headers.location));
  };

  it.each([
    ['both', `/download/${STORED}`, {}],
    ['today', `/download/${STORED}`, {}],
    ['both', `/api-key/download/${STORED}`, { 'X-api-key': 'key-one' }],
    ['today', `/authorized/download/${STORED}`, { Authorization: 'Bearer token-two' }],
  ] as const)('%s %s answers like GET, without a body', async (dialect, path, headers) => {
    const get = await rawRequest(base(dialect), path, { headers });
    const head = await rawRequest(base(dialect), path, { method: 'HEAD', headers });
    expect(outcomeOf(get, mode).statusCode).toBe(302);
    sameAnswerWithoutBody(head, get);
    if (mode !== 'envelope-200') expect(head.headers.location).toMatch(new RegExp(`/objects/${STORED}\\?`));
  });

  it('HEAD of a missing file, of no path and without a token answers the status of GET, without a body', async () => {
    for (const [path, status] of [
      ['/download/imap/swe/l0/2025/02/imap_swe_l0_raw_20250204_20250204_v01-00.pkts', 404],
      ['/download', 400],
      [`/authorized/download/${STORED}`, 401],
    ] as const) {
      const get = await rawRequest(base('both'), path);
      const head = await rawRequest(base('both'), path, { method: 'HEAD' });
      expect(outcomeOf(get, mode).statusCode).toBe(status);
      sameAnswerWithoutBody(head, get);
    }
  });

  it('Allow: GET in spec (HEAD is a 405 there, as the specification has GET only); GET, HEAD in both and today', async () => {
    const head = await rawRequest(base('spec'), `/download/${STORED}`, { method: 'HEAD' });
    expect(head.status).toBe(mode === 'envelope-200' ? 200 : 405);
    expect(head.body.length).toBe(0);
    if (mode !== 'envelope-200') expect(head.headers.allow).toBe('GET');
    for (const dialect of ['both', 'today'] as const) {
      for (const [method, path] of [
        ['DELETE', `/download/${STORED}`],
        ['PUT', `/api-key/download/${STORED}`],
      ] as const) {
        const result = await rawRequest(base(dialect), path, { method, headers: { 'X-api-key': 'key-one' } });
        expectWire(result, mode, {
          statusCode: 405,
          headers: { ...TEXT, Allow: 'GET, HEAD' },
          body: `Method ${method} is not allowed on ${path}; use GET or HEAD.`,
        });
        if (mode !== 'envelope-200') expect(result.headers.allow).toBe('GET, HEAD');
      }
    }
  });
});

describe.each(WIRE_MODE_LIST)('409 forms, wire mode %s', (mode) => {
  const base = serverPerDialect(mode, { apiKeys: API_KEYS, tokens: TOKENS });
  const todayForm = {
    statusCode: 409,
    headers: JSON_HEADERS,
    body: { error: 'FileAlreadyExists', message: MESSAGES.fileExists(STORED) },
  };
  const specForm = (dialect: Dialect) => ({
    statusCode: 409,
    headers: TEXT,
    body: `${base(dialect)}/objects/${STORED} already exists.`,
  });
  const key = { 'X-api-key': 'key-one' };
  const token = { Authorization: 'Bearer token-one' };

  it("both: the plain /upload answers the specification's string; /api-key/ and /authorized/ uploads today's object", async () => {
    expectWire(await rawRequest(base('both'), `/upload/${STORED}`, { headers: key }), mode, specForm('both'));
    expectWire(
      await rawRequest(base('both'), `/api-key/upload/${STORED}`, { headers: key }),
      mode,
      todayForm,
    );
    expectWire(
      await rawRequest(base('both'), `/authorized/upload/${STORED}`, { headers: token }),
      mode,
      todayForm,
    );
  });

  it('spec answers the string and today the object, the key rebuilt from the name alone', async () => {
    const name = STORED.slice(STORED.lastIndexOf('/') + 1);
    expectWire(await rawRequest(base('spec'), `/upload/${name}`, { headers: key }), mode, specForm('spec'));
    expectWire(await rawRequest(base('today'), `/api-key/upload/${name}`, { headers: key }), mode, todayForm);
    expectWire(
      await rawRequest(base('today'), `/api-key/upload/elsewhere/${name}`, { headers: key }),
      mode,
      todayForm,
    );
  });
});

describe('options', () => {
  it('startReferenceServer refuses an unknown dialect', async () => {
    const root = await makeTempDir();
    try {
      await expect(
        startReferenceServer({ store: join(root, 'store'), dialect: 'modern' as Dialect }),
      ).rejects.toThrow('Unknown dialect "modern"; choose one of both, spec, today.');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  /** Parses `serve` arguments with the real program, in-process, with captured output. */
  function serveProgram(args: string[]) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const controller = new AbortController();
    let work: (() => Promise<number | undefined>) | undefined;
    const program = buildProgram(
      { stdout, stderr, stdin: new PassThrough(), signal: controller.signal },
      (next) => {
        work = next;
      },
    );
    return {
      parse: () => program.parseAsync(['node', 'mission-data', 'serve', ...args]),
      work: () => (work as () => Promise<number | undefined>)(),
      stop: () => controller.abort(),
      stdout: () => out,
      stderr: () => err,
    };
  }

  it("serve --dialect today --token T (repeatable) plays today's service with those tokens", async () => {
    const root = await makeTempDir();
    try {
      const served = serveProgram([
        '--port',
        '0',
        '--store',
        join(root, 'store'),
        '--dialect',
        'today',
        '--token',
        'first-token',
        '--token',
        'second-token',
        '--api-key',
        'key',
      ]);
      await served.parse();
      const finished = served.work();
      expect(await eventually(async () => served.stderr().includes('Stop with Ctrl-C.'))).toBe(true);
      const url = /^Listening on (\S+)\n$/.exec(served.stdout())?.[1] as string;
      expect(served.stderr()).toContain(
        'Dialect today: uploads at /api-key/upload only, latest=true, paging.\n' +
          'Access: uploads need an API key; /authorized/ routes take 2 bearer tokens.\n',
      );
      expect(outcomeOf(await rawRequest(url, `/upload/${NEW_NAME}`), 'envelope').statusCode).toBe(404);
      expect(
        outcomeOf(await rawRequest(url, '/query?instrument=mag&version=latest'), 'envelope').statusCode,
      ).toBe(400);
      for (const token of ['first-token', 'second-token']) {
        const result = await rawRequest(url, '/authorized/query?instrument=mag&latest=true', {
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(outcomeOf(result, 'envelope')).toEqual({ statusCode: 200, body: [] });
      }
      served.stop();
      expect(await finished).toBe(0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('serve takes --dialect both by default and refuses a dialect it does not know', async () => {
    const root = await makeTempDir();
    try {
      const served = serveProgram(['--port', '0', '--store', join(root, 'store'), '--quiet']);
      await served.parse();
      const finished = served.work();
      expect(await eventually(async () => served.stdout().startsWith('Listening on '))).toBe(true);
      const url = /^Listening on (\S+)\n$/.exec(served.stdout())?.[1] as string;
      expect(outcomeOf(await rawRequest(url, '/api-key/query?latest=true'), 'envelope').statusCode).toBe(200);
      expect(outcomeOf(await rawRequest(url, '/query?version=latest'), 'envelope').statusCode).toBe(200);
      served.stop();
      expect(await finished).toBe(0);
      await expect(serveProgram(['--dialect', 'modern']).parse()).rejects.toThrow(
        "option '--dialect <dialect>' argument 'modern' is invalid. Allowed choices are both, spec, today.",
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
