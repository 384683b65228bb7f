/** The object routes behind pre-signed URLs: PUT, GET, HEAD, Range, ETag, Content-MD5, Content-Length. */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ValidationError } from '../../src/core/errors.js';
import { parseName } from '../../src/naming/names.js';
import { parseSpecName } from '../../src/naming/spec-names.js';
import {
  type HttpResult,
  outcomeOf,
  pathOf,
  rawBytes,
  rawRequest,
  startTestServer,
  type TestServer,
  testSigner,
} from './helpers.js';

const NAME = 'imap_hit_l1a_count-rates_20250110_20250110_v01-00.cdf';
const KEY = `imap/hit/l1a/2025/01/${NAME}`;
const BYTES = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));

let test: TestServer;
let base: string;

beforeEach(async () => {
  test = await startTestServer();
  base = test.server.url;
});
afterEach(() => test.cleanup());

async function uploadUrl(name = NAME): Promise<string> {
  const result = await rawRequest(base, `/upload/${name}`);
  return outcomeOf(result, 'envelope').body as string;
}

async function downloadUrl(key = KEY): Promise<string> {
  const result = await rawRequest(base, `/download/${key}`);
  return (outcomeOf(result, 'envelope').body as { download_url: string }).download_url;
}

async function store(bytes = BYTES, name = NAME): Promise<HttpResult> {
  return rawRequest(base, pathOf(await uploadUrl(name)), { method: 'PUT', body: bytes });
}

function md5(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('base64');
}

describe('PUT', () => {
  it('stores the bytes, answers 200 with an ETag, and the file is then listed, downloadable and a 409', async () => {
    const put = await store();
    expect(put.status).toBe(200);
    expect(put.headers.etag).toBe(`"${createHash('md5').update(BYTES).digest('hex')}"`);
    const get = await rawRequest(base, pathOf(await downloadUrl()));
    expect(get.status).toBe(200);
    expect(get.body).toEqual(BYTES);
    expect(get.headers.etag).toBe(put.headers.etag);
    const records = outcomeOf(await rawRequest(base, '/query?instrument=hit'), 'envelope').body as Array<
      Record<string, string>
    >;
    expect(records.map((record) => record.file_path)).toEqual([KEY]);
    const today = new Date().toISOString().slice(0, 10);
    expect(records[0]?.ingestion_date).toMatch(new RegExp(`^${today} \\d{2}:\\d{2}:\\d{2}$`));
    expect(outcomeOf(await rawRequest(base, `/upload/${NAME}`), 'envelope').statusCode).toBe(409);
  });

  it('a correct Content-MD5 is accepted', async () => {
    const url = await uploadUrl();
    const put = await rawRequest(base, pathOf(url), {
      method: 'PUT',
      body: BYTES,
      headers: { 'Content-MD5': md5(BYTES) },
    });
    expect(put.status).toBe(200);
  });

  it('a wrong Content-MD5 is a 400 and stores nothing', async () => {
    const url = await uploadUrl();
    const put = await rawRequest(base, pathOf(url), {
      method: 'PUT',
      body: BYTES,
      headers: { 'Content-MD5': md5(Buffer.from('other bytes')) },
    });
    expect(put.status).toBe(400);
    expect(put.text).toBe('Content-MD5 does not match the bytes received; nothing was stored.\n');
    expect((await rawRequest(base, `/download/${KEY}`)).status).toBe(404);
    expect(outcomeOf(await rawRequest(base, '/query?instrument=hit'), 'envelope').body).toEqual([]);
    // The same URL works once the bytes are right.
    expect((await rawRequest(base, pathOf(url), { method: 'PUT', body: BYTES })).status).toBe(200);
  });

  it('a malformed Content-MD5 is a 400', async () => {
    const put = await rawRequest(base, pathOf(await uploadUrl()), {
      method: 'PUT',
      body: BYTES,
      headers: { 'Content-MD5': 'not-base64-md5' },
    });
    expect(put.status).toBe(400);
    expect(put.text).toBe('Content-MD5 must be the base64 of the 16-byte MD5 digest of the body.\n');
  });

  it('needs a Content-Length: a chunked upload is a 411 and stores nothing', async () => {
    const url = new URL(await uploadUrl());
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: 'PUT',
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('chunk one');
      req.end('chunk two');
    });
    expect(status).toBe(411);
    expect((await rawRequest(base, `/download/${KEY}`)).status).toBe(404);
  });

  it('needs a Content-Length: a PUT with neither Content-Length nor a body is a 411', async () => {
    const url = new URL(await uploadUrl());
    const answer = await rawBytes(
      base,
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 411 /);
    expect(answer).toContain('Content-Length required: send the object with a Content-Length, not chunked.');
    expect((await rawRequest(base, `/download/${KEY}`)).status).toBe(404);
  });

  it('an existing object is a 409 and keeps its bytes', async () => {
    const url = await uploadUrl();
    expect((await rawRequest(base, pathOf(url), { method: 'PUT', body: BYTES })).status).toBe(200);
    const again = await rawRequest(base, pathOf(url), { method: 'PUT', body: 'replacement' });
    expect(again.status).toBe(409);
    expect(again.text).toBe(`${KEY} already exists.\n`);
    expect((await rawRequest(base, pathOf(await downloadUrl()))).body).toEqual(BYTES);
  });

  it('with Expect: 100-continue, a refused PUT is answered before the body is sent', async () => {
    await store();
    const url = new URL(testSigner.sign(base, 'PUT', KEY));
    const outcome = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'PUT',
        agent: false,
        headers: { 'Content-Length': String(BYTES.length), Expect: '100-continue' },
      });
      req.on('continue', () => {
        continued = true;
        req.end(BYTES);
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, continued });
        req.destroy();
      });
      req.on('error', reject);
    });
    expect(outcome).toEqual({ status: 409, continued: false });
  });

  it('with Expect: 100-continue, an accepted PUT asks for the body and stores it', async () => {
    const url = new URL(await uploadUrl());
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'PUT',
        agent: false,
        headers: { 'Content-Length': String(BYTES.length), Expect: '100-continue' },
      });
      req.on('continue', () => req.end(BYTES));
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    expect(status).toBe(200);
    expect((await rawRequest(base, pathOf(await downloadUrl()))).body).toEqual(BYTES);
  });

  it('an empty object can be stored and read', async () => {
    expect((await store(Buffer.alloc(0))).status).toBe(200);
    const get = await rawRequest(base, pathOf(await downloadUrl()));
    expect(get.status).toBe(200);
    expect(get.headers['content-length']).toBe('0');
    expect(get.body.length).toBe(0);
  });
});

describe('GET and HEAD', () => {
  let url: string;
  beforeEach(async () => {
    await store();
    url = pathOf(await downloadUrl());
  });

  it('GET sends the bytes with Content-Length, ETag, Last-Modified and Accept-Ranges', async () => {
    const get = await rawRequest(base, url);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(BYTES);
    expect(get.headers['content-length']).toBe(String(BYTES.length));
    expect(get.headers['accept-ranges']).toBe('bytes');
    expect(get.headers.etag).toBe(`"${createHash('md5').update(BYTES).digest('hex')}"`);
    expect(new Date(String(get.headers['last-modified'])).getTime()).not.toBeNaN();
  });

  it('HEAD sends the same headers and no body', async () => {
    const get = await rawRequest(base, url);
    const head = await rawRequest(base, url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const name of ['content-length', 'etag', 'last-modified', 'accept-ranges']) {
      expect(head.headers[name]).toBe(get.headers[name]);
    }
  });

  it.each([
    ['bytes=0-9', 0, 9],
    ['bytes=4990-', 4990, 4999],
    ['bytes=-10', 4990, 4999],
    ['bytes=100-199', 100, 199],
    ['bytes=4999-99999', 4999, 4999],
    ['bytes=-99999', 0, 4999],
  ])('Range %s is a 206 with those bytes', async (range, start, end) => {
    const get = await rawRequest(base, url, { headers: { Range: range } });
    expect(get.status).toBe(206);
    expect(get.headers['content-range']).toBe(`bytes ${start}-${end}/${BYTES.length}`);
    expect(get.headers['content-length']).toBe(String(end - start + 1));
    expect(get.body).toEqual(BYTES.subarray(start, end + 1));
  });

  it.each(['bytes=5000-', 'bytes=9999-10000', 'bytes=-0'])('Range %s is a 416', async (range) => {
    const get = await rawRequest(base, url, { headers: { Range: range } });
    expect(get.status).toBe(416);
    expect(get.headers['content-range']).toBe(`bytes */${BYTES.length}`);
    expect(get.text).toBe(`Range not satisfiable: the object has ${BYTES.length} bytes.\n`);
  });

  it.each(['bytes=9-2', 'bytes=abc', 'bytes=', 'bytes=5', 'bytes=--5', 'bytes=0-1,x', 'bytes=1.5-2'])(
    'a malformed byte Range (%s) is a 416 saying so',
    async (range) => {
      const get = await rawRequest(base, url, { headers: { Range: range } });
      expect(get.status).toBe(416);
      expect(get.headers['content-range']).toBe(`bytes */${BYTES.length}`);
      expect(get.text).toBe(
        `Invalid Range ${JSON.stringify(range)}: use bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX.\n`,
      );
    },
  );

  it.each(['bytes=0-1,5-6', 'items=0-1', 'garbage'])(
    'a Range of several parts or another unit (%s) gets the whole object',
    async (range) => {
      const get = await rawRequest(base, url, { headers: { Range: range } });
      expect(get.status).toBe(200);
      expect(get.body).toEqual(BYTES);
    },
  );

  it('HEAD with a Range answers the 206 headers without a body', async () => {
    const head = await rawRequest(base, url, { method: 'HEAD', headers: { Range: 'bytes=10-19' } });
    expect(head.status).toBe(206);
    expect(head.headers['content-range']).toBe(`bytes 10-19/${BYTES.length}`);
    expect(head.headers['content-length']).toBe('10');
    expect(head.body.length).toBe(0);
  });

  it('If-Range with the current ETag keeps the range; a stale one gets the whole object', async () => {
    const { headers } = await rawRequest(base, url, { method: 'HEAD' });
    const fresh = await rawRequest(base, url, {
      headers: { Range: 'bytes=0-9', 'If-Range': String(headers.etag) },
    });
    expect(fresh.status).toBe(206);
    const stale = await rawRequest(base, url, { headers: { Range: 'bytes=0-9', 'If-Range': '"0-0"' } });
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual(BYTES);
  });

  it('If-None-Match with the ETag is a 304', async () => {
    const { headers } = await rawRequest(base, url, { method: 'HEAD' });
    const get = await rawRequest(base, url, { headers: { 'If-None-Match': String(headers.etag) } });
    expect(get.status).toBe(304);
    expect(get.body.length).toBe(0);
  });

  it('the ETag and Last-Modified survive a restart', async () => {
    const before = await rawRequest(base, url, { method: 'HEAD' });
    await test.server.close();
    const { startReferenceServer } = await import('../../src/server/index.js');
    const again = await startReferenceServer({
      store: test.storeDir,
      secret: 'test-secret-0123456789abcdef',
    });
    try {
      const after = await rawRequest(again.url, url, { method: 'HEAD' });
      expect(after.status).toBe(200);
      expect(after.headers.etag).toBe(before.headers.etag);
      expect(after.headers['last-modified']).toBe(before.headers['last-modified']);
    } finally {
      await again.close();
    }
  });

  it('other methods are a 405 with Allow', async () => {
    const result = await rawRequest(base, url, { method: 'DELETE' });
    expect(result.status).toBe(405);
    expect(result.headers.allow).toBe('GET, HEAD, PUT');
    expect(result.text).toBe('Method DELETE is not allowed on objects; use GET, HEAD, PUT.\n');
  });

  it('a signed URL for an object that is not stored is a 404', async () => {
    const missing = testSigner.sign(
      base,
      'GET',
      'imap/hit/l1a/2025/01/imap_hit_l1a_count-rates_20250111_20250111_v01-00.cdf',
    );
    const result = await rawRequest(base, pathOf(missing));
    expect(result.status).toBe(404);
    expect(result.headers['content-type']).toBe('text/plain; charset=utf-8');
  });
});

/** One name of each kind of today's generation: science (repointing, CR), ancillary, SPICE, quicklook, dependency, release. */
const TODAY_NAMES = [
  'imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf',
  'imap_glows_l3b_ion-rate_20250105-cr02291_v001.0000.cdf',
  'imap_mag_calibration_20250101_v001.cdf',
  'naif0012.tls',
  'imap_2025_032_2025_034_003.ah.bc',
  'imap_swe_l1b_sci_20250105_v001.0000.png',
  'imap_swe_l1b_sci_20250105_v001.0000.json',
  'imap_hit_data-release-001_20250101_20250131_v001.txt',
];

describe('/upload and /download of every kind, by dialect', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.cleanup();
  });
  const serve = async (options: Parameters<typeof startTestServer>[0]) => {
    const started = await startTestServer(options);
    servers.push(started);
    return started.server.url;
  };

  it("spec: today's names are refused with the specification's grammar's message; its own names are taken", async () => {
    const url = await serve({ dialect: 'spec' });
    for (const name of TODAY_NAMES) {
      const result = outcomeOf(await rawRequest(url, `/upload/${name}`), 'envelope');
      let message = '';
      try {
        parseSpecName(name);
      } catch (error) {
        message = (error as ValidationError).problems.join('\n');
      }
      expect(message).not.toBe('');
      expect(result, name).toEqual({ statusCode: 400, body: message });
    }
    expect(outcomeOf(await rawRequest(url, `/upload/${NAME}`), 'envelope').statusCode).toBe(200);
  });

  it.each([
    ['both', '/upload'],
    ['today', '/api-key/upload'],
  ] as const)(
    '%s: every kind is stored at its storage path and downloaded from it, its MD5 in the URL',
    async (dialect, route) => {
      const url = await serve({ dialect, apiKeys: ['key-one'] });
      const headers = { 'X-api-key': 'key-one' };
      for (const [index, name] of TODAY_NAMES.entries()) {
        const bytes = Buffer.from(`${name} ${index}`);
        const upload = outcomeOf(await rawRequest(url, `${route}/${name}`, { headers }), 'envelope');
        expect(upload.statusCode, name).toBe(200);
        const path = parseName(name).path;
        expect(new URL(upload.body as string).pathname).toBe(`/objects/${path}`);
        expect(
          (await rawRequest(url, pathOf(upload.body as string), { method: 'PUT', body: bytes })).status,
        ).toBe(200);
        const download = outcomeOf(await rawRequest(url, `/download/${path}`), 'envelope');
        expect(download.statusCode, path).toBe(302);
        const location = new URL((download.body as { download_url: string }).download_url);
        expect(location.hash).toBe(`#md5=${createHash('md5').update(bytes).digest('hex')}`);
        const got = await rawRequest(url, pathOf(location.href));
        expect(got.status).toBe(200);
        expect(got.body).toEqual(bytes);
      }
    },
  );

  it('both: a name in neither generation is refused with the messages of both', async () => {
    const url = await serve({ dialect: 'both' });
    const name = 'imap_hi-45_l1a_de_20250105_v001.0000.cdf';
    let message = '';
    try {
      parseName(name);
    } catch (error) {
      message = (error as ValidationError).problems.join('\n');
    }
    expect(outcomeOf(await rawRequest(url, `/upload/${name}`), 'envelope')).toEqual({
      statusCode: 400,
      body: message,
    });
  });

  it('states no checksum in the URL of an object that, as under SSE-KMS, nothing vouches for', async () => {
    const url = await serve({ faults: { kms: true } });
    const upload = outcomeOf(await rawRequest(url, `/upload/${NAME}`), 'envelope').body as string;
    expect((await rawRequest(url, pathOf(upload), { method: 'PUT', body: BYTES })).status).toBe(200);
    const download = outcomeOf(await rawRequest(url, `/download/${KEY}`), 'envelope');
    expect(new URL((download.body as { download_url: string }).download_url).hash).toBe('');
  });
});
