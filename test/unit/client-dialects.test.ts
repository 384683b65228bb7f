/**
 * The client against the service as it runs today and as the specification froze it (the reference server's
 * dialects): paging, both forms of `latest`, the `/api-key/` and `/authorized/` routes with their fallbacks
 * (requests counted), and both forms of a 409.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ValidationError } from '../../src/core/errors.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { HttpClient } from '../../src/service/client.js';
import type { HttpClientOptions } from '../../src/service/types.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { bytesUpload } from '../helpers/uploads.js';
import { makeTempDir, putStoreFile, startTestServer, type TestServer } from '../server/helpers.js';

/**
 * A server's request log once it is settled: the server logs an answer when its connection reports it done,
 * which can come just after the client has read it (on a busy machine, visibly so).
 */
async function settled(log: string[]): Promise<string[]> {
  let seen = -1;
  for (let round = 0; round < 100 && seen !== log.length; round += 1) {
    seen = log.length;
    await new Promise((done) => setTimeout(done, 20));
  }
  return log;
}

const A = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const B = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v02-00.cdf';
const D = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250131_20250201_v01-00.cdf';
const SWE = 'imap/swe/l0/2025/02/imap_swe_l0_raw_20250203_20250203_v01-00.pkts';
const MISSING = 'imap/swe/l0/2025/02/imap_swe_l0_raw_20250204_20250204_v01-00.pkts';

async function smallStore(storeDir: string): Promise<void> {
  for (const key of [A, B, D, SWE]) await putStoreFile(storeDir, key, key);
}

/** A reference server of one dialect whose requests are logged, path and query string as received. */
interface LoggedServer {
  test: TestServer;
  url: string;
  log: string[];
}

async function loggedServer(
  options: Parameters<typeof startTestServer>[0],
  prepare: (storeDir: string) => Promise<void> = smallStore,
): Promise<LoggedServer> {
  const log: string[] = [];
  const test = await startTestServer(
    { ...options, log: (entry: RequestLogEntry) => log.push(`${entry.status} ${entry.path}`) },
    prepare,
  );
  return { test, url: test.server.url, log };
}

function httpClient(url: string, options: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({ url, retryBaseMs: 1, ...options });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to fail');
}

const paths = (records: readonly { file_path: string }[]) => records.map((record) => record.file_path);

describe('paging through 25,000 records', () => {
  const COUNT = 25_000;
  let root: string;
  let keys: string[];
  let both: LoggedServer;
  let spec: LoggedServer;

  beforeAll(async () => {
    root = await makeTempDir();
    keys = [];
    for (let day = 0; keys.length < COUNT; day += 1) {
      const date = new Date(Date.UTC(2024, 0, 1) + day * 86_400_000)
        .toISOString()
        .slice(0, 10)
        .replaceAll('-', '');
      for (const instrument of ['mag', 'swe', 'hit', 'lo', 'idex']) {
        for (const descriptor of ['sci', 'burst', 'norm', 'cal', 'raw']) {
          if (keys.length === COUNT) break;
          const name = `imap_${instrument}_l1a_${descriptor}_${date}_${date}_v01-00.cdf`;
          keys.push(`imap/${instrument}/l1a/${date.slice(0, 4)}/${date.slice(4, 6)}/${name}`);
        }
      }
    }
    // Synchronous writes: tens of thousands of promises would be slower.
    const store = join(root, 'store');
    for (const key of keys) {
      const path = join(store, ...key.split('/'));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, '');
    }
    const prepare = async (storeDir: string) => {
      await rm(storeDir, { recursive: true, force: true });
      const { cp } = await import('node:fs/promises');
      await cp(store, storeDir, { recursive: true, preserveTimestamps: true });
    };
    both = await loggedServer({ dialect: 'both' }, prepare);
    spec = await loggedServer({ dialect: 'spec' }, prepare);
  }, 120_000);
  afterAll(async () => {
    await both?.test.cleanup();
    await spec?.test.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  it('pages of 1,000 from a service that pages equal one unpaged query of a service that does not', async () => {
    const paged = httpClient(both.url);
    const unpaged = httpClient(spec.url);
    try {
      const fromPages = await paged.query({ table: 'science' }, { pageSize: 1000 });
      // 25 full pages, then an empty one says the answer is complete. (The server logs an answer once its
      // connection reports it done, which may come just after the client has read it.)
      expect(await settled(both.log)).toHaveLength(26);
      expect(both.log[0]).toBe('200 /query?table=science&offset=0&limit=1000');
      expect(both.log[25]).toBe('200 /query?table=science&offset=25000&limit=1000');
      expect(paged.dialect.paging).toBe('yes');

      const whole = await unpaged.query({ table: 'science' }, { pageSize: 1000 });
      // The specification's service refuses offset and limit: one extra request, then one unpaged query.
      expect(await settled(spec.log)).toEqual([
        '400 /query?table=science&offset=0&limit=1000',
        '200 /query?table=science',
      ]);
      expect(unpaged.dialect.paging).toBe('no');
      expect(whole).toHaveLength(COUNT);
      expect(paths(whole)).toEqual([...keys].sort());
      expect(fromPages).toEqual(whole);

      // Remembered for the run: the next query costs one request.
      await unpaged.query({ instrument: 'mag' });
      expect((await settled(spec.log)).slice(2)).toEqual(['200 /query?instrument=mag']);
    } finally {
      await paged.close();
      await unpaged.close();
    }
  }, 60_000);

  it('a service that ignores offset and limit and sends more than a page has answered in full', async () => {
    let calls = 0;
    const records = keys.slice(0, 30).map((key) => ({
      file_path: key,
      instrument: key.split('/')[1],
      data_level: 'l1a',
      descriptor: 'sci',
      start_date: '20240101',
      end_date: '20240101',
      version: 'v01-00',
      extension: 'cdf',
    }));
    const dispatcher = new MswDispatcher([
      http.get('http://api.test/query', () => {
        calls += 1;
        return HttpResponse.json(records);
      }),
    ]);
    const client = httpClient('http://api.test', { dispatcher });
    expect(await client.query({ instrument: 'mag' }, { pageSize: 10 })).toEqual(records);
    expect(calls).toBe(1);
    expect(client.dialect.paging).toBe('no');
    await client.query({ instrument: 'mag' }, { pageSize: 10 });
    expect(dispatcher.requests[1]?.url).toBe('http://api.test/query?instrument=mag');
  });

  it('a service that ignores offset and sends exactly a page twice: the repeat is dropped', async () => {
    const records = keys.slice(0, 10).map((key) => ({
      file_path: key,
      instrument: key.split('/')[1],
      descriptor: 'sci',
      start_date: '20240101',
      version: 'v01-00',
      extension: 'cdf',
    }));
    const dispatcher = new MswDispatcher([
      http.get('http://api.test/query', () => HttpResponse.json(records)),
    ]);
    const client = httpClient('http://api.test', { dispatcher });
    expect(await client.query({ instrument: 'mag' }, { pageSize: 10 })).toEqual(records);
    expect(dispatcher.requests).toHaveLength(2);
    expect(client.dialect.paging).toBe('no');
  });

  it('refuses a page size outside 1 to 10,000 before any request', async () => {
    const client = httpClient(both.url);
    for (const pageSize of [0, 10_001, 2.5]) {
      await expect(client.query({ instrument: 'mag' }, { pageSize })).rejects.toBeInstanceOf(ValidationError);
    }
    await client.close();
  });
});

describe('--version latest against both services', () => {
  const servers = new Map<'spec' | 'today', LoggedServer>();
  beforeAll(async () => {
    servers.set('spec', await loggedServer({ dialect: 'spec' }));
    servers.set('today', await loggedServer({ dialect: 'today' }));
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.test.cleanup();
  });

  it('spec: version=latest is answered (after the one request that learns it does not page)', async () => {
    const server = servers.get('spec') as LoggedServer;
    const client = httpClient(server.url);
    expect(paths(await client.query({ instrument: 'mag', version: 'latest' }))).toEqual([B, D]);
    expect(await client.query({ instrument: 'mag', version: 'latest' })).toHaveLength(2);
    expect(await settled(server.log)).toEqual([
      '400 /query?instrument=mag&version=latest&offset=0&limit=10000',
      '200 /query?instrument=mag&version=latest',
      '200 /query?instrument=mag&version=latest',
    ]);
    expect(client.dialect.latest).toBe('version=latest');
    await client.close();
  });

  it('today: a 400 naming version turns it into latest=true, remembered for the run', async () => {
    const server = servers.get('today') as LoggedServer;
    const client = httpClient(server.url);
    expect(paths(await client.query({ instrument: 'mag', version: 'latest' }))).toEqual([B, D]);
    expect(paths(await client.query({ instrument: 'mag', version: 'latest' }))).toEqual([B, D]);
    expect(await settled(server.log)).toEqual([
      '400 /query?instrument=mag&version=latest&offset=0&limit=10000',
      '200 /query?instrument=mag&latest=true&offset=0&limit=10000',
      '200 /query?instrument=mag&latest=true&offset=0&limit=10000',
    ]);
    expect(client.dialect.latest).toBe('latest=true');
    // Other versions are still asked by name.
    expect(paths(await client.query({ instrument: 'mag', version: 'v01-00' }))).toEqual([A, D]);
    await client.close();
  });

  it('a 400 that names another parameter is the error, without a second request', async () => {
    const dispatcher = new MswDispatcher([
      http.get('http://api.test/query', () =>
        HttpResponse.text('Invalid instrument. Please choose from mag', { status: 400 }),
      ),
    ]);
    const client = httpClient('http://api.test', { dispatcher });
    const error = await failure(client.query({ instrument: 'mag', version: 'latest' }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('400 Invalid instrument');
    expect(dispatcher.requests).toHaveLength(1);
    expect(client.dialect).toEqual({ prefixedRoutes: 'unknown', latest: 'unknown', paging: 'unknown' });
  });
});

describe('API key and token routes', () => {
  const KEY = 'key-one';
  const TOKEN = 'token-one';
  const servers = new Map<'spec' | 'today', LoggedServer>();
  beforeAll(async () => {
    servers.set('spec', await loggedServer({ dialect: 'spec', apiKeys: [KEY] }));
    servers.set('today', await loggedServer({ dialect: 'today', apiKeys: [KEY], tokens: [TOKEN] }));
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.test.cleanup();
  });
  const fresh = (name: 'spec' | 'today') => {
    const server = servers.get(name) as LoggedServer;
    server.log.length = 0;
    return server;
  };
  const NEW = 'imap_mag_l2_norm_20250301_20250301_v01-00.cdf';

  it('today, with a key: every route under /api-key/, no extra request', async () => {
    const server = fresh('today');
    const client = httpClient(server.url, { apiKey: KEY });
    await client.query({ instrument: 'swe' });
    await client.resolveDownload(SWE);
    await client.presignUpload(NEW);
    expect(await settled(server.log)).toEqual([
      '200 /api-key/query?instrument=swe&offset=0&limit=10000',
      `302 /api-key/download/${SWE}`,
      `200 /api-key/upload/${NEW}`,
    ]);
    expect(client.dialect.prefixedRoutes).toBe('yes');
    await client.close();
  });

  it('spec, with a key: one 404 under /api-key/, then plain routes for the rest of the run', async () => {
    const server = fresh('spec');
    const client = httpClient(server.url, { apiKey: KEY });
    await client.resolveDownload(SWE);
    await client.query({ instrument: 'swe' });
    await client.presignUpload(NEW);
    expect(await settled(server.log)).toEqual([
      `404 /api-key/download/${SWE}`,
      `302 /download/${SWE}`,
      '400 /query?instrument=swe&offset=0&limit=10000',
      '200 /query?instrument=swe',
      // The plain upload checks the key, which was sent: 200.
      `200 /upload/${NEW}`,
    ]);
    expect(client.dialect.prefixedRoutes).toBe('no');
    await client.close();
  });

  it('today, with a token: /authorized/ routes with the bearer token; uploads under /api-key/ when a key is set too', async () => {
    const server = fresh('today');
    const client = httpClient(server.url, { token: TOKEN });
    expect(paths(await client.query({ instrument: 'swe' }))).toEqual([SWE]);
    await client.resolveDownload(SWE);
    expect(await settled(server.log)).toEqual([
      '200 /authorized/query?instrument=swe&offset=0&limit=10000',
      `302 /authorized/download/${SWE}`,
    ]);
    await client.close();

    server.log.length = 0;
    const both = httpClient(server.url, { token: TOKEN, apiKey: KEY });
    await both.presignUpload(NEW);
    await both.query({ instrument: 'swe' });
    expect(await settled(server.log)).toEqual([
      `200 /api-key/upload/${NEW}`,
      '200 /authorized/query?instrument=swe&offset=0&limit=10000',
    ]);
    await both.close();
  });

  it('spec, with a token: one 404 under /authorized/, then plain routes', async () => {
    const server = fresh('spec');
    const client = httpClient(server.url, { token: TOKEN });
    await client.query({ instrument: 'swe' });
    await client.query({ instrument: 'mag' });
    expect(await settled(server.log)).toEqual([
      '404 /authorized/query?instrument=swe&offset=0&limit=10000',
      '400 /query?instrument=swe&offset=0&limit=10000',
      '200 /query?instrument=swe',
      '200 /query?instrument=mag',
    ]);
    await client.close();
  });

  it('today, a missing file: the same 404 from both routes keeps /api-key/ for the run', async () => {
    const server = fresh('today');
    const client = httpClient(server.url, { apiKey: KEY });
    const error = await failure(client.resolveDownload(MISSING));
    expect(error).toMatchObject({ code: 'E_NOT_FOUND', status: 404 });
    expect(error.message).toContain(`the archive holds no such file (404 from GET `);
    expect(error.message).toMatch(`/api-key/download/${MISSING}, request id `);
    await failure(client.resolveDownload(MISSING));
    await client.resolveDownload(SWE);
    expect(await settled(server.log)).toEqual([
      `404 /api-key/download/${MISSING}`,
      `404 /download/${MISSING}`,
      `404 /api-key/download/${MISSING}`,
      `302 /api-key/download/${SWE}`,
    ]);
    await client.close();
  });

  it('the key and the token reach every service request and never the object store', async () => {
    const OBJECT = 'http://store.test/objects/x?sig=1';
    const dispatcher = new MswDispatcher([
      http.get('http://api.test/authorized/download/*', () =>
        HttpResponse.json({ statusCode: 302, headers: { Location: OBJECT }, body: {} }),
      ),
      http.get('http://api.test/api-key/upload/*', () =>
        HttpResponse.json({ statusCode: 200, body: OBJECT }),
      ),
      http.get('http://api.test/authorized/query', () => HttpResponse.json([])),
      http.get('http://store.test/objects/*', () => new HttpResponse('bytes')),
      http.put('http://store.test/objects/*', () => new HttpResponse(null, { status: 200 })),
    ]);
    const client = httpClient('http://api.test', { dispatcher, apiKey: 'k', token: 't' });
    await client.query({ instrument: 'mag' });
    const target = await client.presignUpload(NEW);
    await client.putObject(target, bytesUpload(Buffer.from('x')));
    await client.getObject(await client.resolveDownload(SWE)).then((answer) => answer.body.dump());
    const seen = dispatcher.requests.map((request) => [
      request.method,
      new URL(request.url).host,
      request.headers.get('x-api-key'),
      request.headers.get('authorization'),
    ]);
    expect(seen).toEqual([
      ['GET', 'api.test', 'k', 'Bearer t'],
      ['GET', 'api.test', 'k', 'Bearer t'],
      ['PUT', 'store.test', null, null],
      ['GET', 'api.test', 'k', 'Bearer t'],
      ['GET', 'store.test', null, null],
    ]);
  });
});

describe('409: the specification string and today object alike', () => {
  let both: TestServer;
  beforeAll(async () => {
    both = await startTestServer({ dialect: 'both', apiKeys: ['k'] }, smallStore);
  });
  afterAll(() => both.cleanup());

  it.each([
    [
      'plain /upload (no key): the string',
      undefined,
      /: 409 http:\/\/.*\/objects\/imap\/swe\/.* already exists\. \(request id [0-9a-f]{16}\)$/,
    ],
    [
      '/api-key/upload: the object',
      'k',
      /^upload imap\/swe\/.*: 409 The file 'imap\/swe\/l0\/2025\/02\/imap_swe_l0_raw_20250203_20250203_v01-00\.pkts' already exists\. Stored files are never replaced/,
    ],
  ])('%s', async (_name, apiKey, message) => {
    // Without a key the plain upload needs one on this server: give it through a second server without keys.
    const server = apiKey ? both : await startTestServer({ dialect: 'spec' }, smallStore);
    try {
      const client = httpClient(server.server.url, apiKey ? { apiKey } : {});
      const error = await failure(client.presignUpload(SWE));
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'E_ALREADY_EXISTS', status: 409 });
      expect(error.message).toMatch(message);
      await client.close();
    } finally {
      if (!apiKey) await server.cleanup();
    }
  });
});
