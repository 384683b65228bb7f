/** Hostile input: traversal, symlinks, forged signatures, racing and vanishing uploads, restarts. */

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../src/server/index.js';
import { UrlSigner } from '../../src/server/objects/presign.js';
import { unixOnly } from '../helpers/platform.js';
import {
  eventually,
  outcomeOf,
  pathOf,
  putStoreFile,
  rawBytes,
  rawRequest,
  startTestServer,
  type TestServer,
  testSigner,
  WIRE_MODE_LIST,
} from './helpers.js';

const LINKS = unixOnly('symlinks');

const SECRET_TEXT = 'TOP SECRET: outside the store';
const NAME = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const KEY = `imap/mag/l1a/2025/01/${NAME}`;

let test: TestServer;
let base: string;

/** The store is `<root>/store`; `<root>/outside.txt` must never be read or overwritten. */
async function withOutsideFile(storeDir: string): Promise<void> {
  await writeFile(join(storeDir, '..', 'outside.txt'), SECRET_TEXT);
  await putStoreFile(storeDir, KEY, 'stored bytes');
}

async function rootEntries(): Promise<string[]> {
  return (await readdir(test.root)).sort();
}

beforeEach(async () => {
  test = await startTestServer({}, withOutsideFile);
  base = test.server.url;
});
afterEach(() => test.cleanup());

/** Path remainders that try to leave the store, in every encoding. */
const TRAVERSALS = [
  '../outside.txt',
  'imap/../../outside.txt',
  'imap/mag/l1a/2025/01/../../../../../outside.txt',
  '%2e%2e/outside.txt',
  '%2E%2E/outside.txt',
  '.%2e/outside.txt',
  '..%2foutside.txt',
  '..%2Foutside.txt',
  'imap%2f..%2f..%2foutside.txt',
  '%252e%252e%252foutside.txt',
  '..\\outside.txt',
  '..%5coutside.txt',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  'C:/Windows/win.ini',
  'imap/mag/x%00.cdf',
  './imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
  'imap//mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
];

describe.each(WIRE_MODE_LIST)('traversal through the API routes (wire %s)', (mode) => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer({ wire: mode }, withOutsideFile);
  });
  afterEach(() => server.cleanup());

  it.each(TRAVERSALS)('/download/%s is a 400 naming the problem', async (rest) => {
    const result = await rawRequest(server.server.url, `/download/${rest}`);
    const { statusCode, body } = outcomeOf(result, mode);
    expect(statusCode).toBe(400);
    expect(body).toMatch(/^Invalid path ".*": it (contains|is absolute)/);
    expect(result.text).not.toContain('SECRET');
  });

  it.each(TRAVERSALS)('/upload/%s is a 400 and writes nothing', async (rest) => {
    const before = (await readdir(server.root)).sort();
    const result = await rawRequest(server.server.url, `/upload/${rest}`);
    expect(outcomeOf(result, mode).statusCode).toBe(400);
    expect((await readdir(server.root)).sort()).toEqual(before);
  });

  it('a traversal in a query file_path is a 400', async () => {
    const result = await rawRequest(server.server.url, '/query?file_path=..%2F..%2Foutside.txt');
    expect(outcomeOf(result, mode)).toEqual({
      statusCode: 400,
      body: `Invalid file_path "../../outside.txt": it contains a '..' segment.`,
    });
  });
});

describe('traversal through the object routes', () => {
  it.each(TRAVERSALS)('GET /objects/%s is a 400, even when signed with the secret', async (rest) => {
    const signed = testSigner.sign(base, 'GET', rest);
    const result = await rawRequest(base, `/objects/${rest}?${signed.split('?')[1]}`);
    expect(result.status).toBe(400);
    expect(result.text).toMatch(/^Invalid object key: it (contains|is absolute)/);
    expect(result.text).not.toContain('SECRET');
  });

  it.each(TRAVERSALS)('PUT /objects/%s is a 400 and writes nothing', async (rest) => {
    const before = await rootEntries();
    const signed = testSigner.sign(base, 'PUT', rest);
    const result = await rawRequest(base, `/objects/${rest}?${signed.split('?')[1]}`, {
      method: 'PUT',
      body: 'evil',
    });
    expect(result.status).toBe(400);
    expect(await rootEntries()).toEqual(before);
    expect(await readFile(join(test.root, 'outside.txt'), 'utf8')).toBe(SECRET_TEXT);
  });

  it('a signed key outside the layout is a 400', async () => {
    const signed = testSigner.sign(base, 'PUT', 'imap/mag/evil.cdf');
    const result = await rawRequest(base, pathOf(signed), { method: 'PUT', body: 'evil' });
    expect(result.status).toBe(400);
    expect(existsSync(join(test.storeDir, 'imap/mag/evil.cdf'))).toBe(false);
  });
});

describe('bytes no HTTP client would send', () => {
  it.each([
    '/download/imap/mag/l1a/2025/01/x\u0000.cdf',
    `/objects/${KEY}\u0000?X-Method=GET`,
    '/upload/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf\u0000../../outside.txt',
    '/download/..\u0001/outside.txt',
  ])('a raw control byte in the path (%j) is a 400 that reads nothing', async (path) => {
    const answer = await rawBytes(base, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).not.toContain('SECRET');
    expect(answer).not.toContain('stored bytes');
  });

  it.each([
    [
      'a raw backslash',
      '/download/..\\outside.txt',
      "it contains a backslash ('\\'); use '/' between folders",
    ],
    [
      'a raw absolute path after the route',
      '/download//etc/passwd',
      'it is absolute; give a path relative to the data root',
    ],
  ])('%s is a 400 naming the problem', async (_, path, reason) => {
    const answer = await rawBytes(base, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { body: string };
    expect(body.body).toBe(`Invalid path ${JSON.stringify(path.slice('/download/'.length))}: ${reason}.`);
  });

  it('an absolute-form request target is read as its path only, and still checked', async () => {
    const answer = await rawBytes(
      base,
      'GET http://elsewhere.example/download/../outside.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain(`Invalid path \\"../outside.txt\\": it contains a '..' segment.`);
    expect(answer).not.toContain('SECRET');
  });
});

describe.skipIf(LINKS.missing)(LINKS.title('symlinks placed in the store'), () => {
  const LINKED = 'imap/swe/l1a/2025/01/imap_swe_l1a_sci_20250101_20250101_v01-00.cdf';
  const IN_LINKED_FOLDER = 'imap/hit/l1a/2025/01/imap_hit_l1a_rates_20250101_20250101_v01-00.cdf';
  const NEW_IN_LINKED_FOLDER = 'imap_hit_l1a_rates_20250102_20250102_v01-00.cdf';
  let linked: Awaited<ReturnType<typeof startReferenceServer>>;

  beforeEach(async () => {
    await test.server.close();
    // A file symlink at a valid key, and a folder symlink holding a valid-looking file, both leading outside.
    await mkdir(join(test.storeDir, 'imap/swe/l1a/2025/01'), { recursive: true });
    await symlink(join(test.root, 'outside.txt'), join(test.storeDir, ...LINKED.split('/')));
    const elsewhere = join(test.root, 'elsewhere');
    await mkdir(join(elsewhere, 'l1a/2025/01'), { recursive: true });
    await writeFile(join(elsewhere, 'l1a/2025/01', IN_LINKED_FOLDER.split('/').pop() as string), SECRET_TEXT);
    await symlink(elsewhere, join(test.storeDir, 'imap/hit'));
    linked = await startReferenceServer({ store: test.storeDir, secret: 'test-secret-0123456789abcdef' });
    base = linked.url;
  });
  afterEach(() => linked.close());

  it('are not indexed: neither query nor download sees them', async () => {
    expect(outcomeOf(await rawRequest(base, '/query?table=science'), 'envelope').body).toEqual([
      expect.objectContaining({ file_path: KEY }),
    ]);
    for (const key of [LINKED, IN_LINKED_FOLDER]) {
      expect(outcomeOf(await rawRequest(base, `/download/${key}`), 'envelope').statusCode).toBe(404);
    }
  });

  it('are never read through a signed GET', async () => {
    for (const key of [LINKED, IN_LINKED_FOLDER]) {
      const result = await rawRequest(base, pathOf(testSigner.sign(base, 'GET', key)));
      expect(result.status).toBe(404);
      expect(result.text).not.toContain('SECRET');
    }
  });

  it('are never written through: a file symlink is a 409, a folder symlink a 400', async () => {
    const overFile = await rawRequest(base, pathOf(testSigner.sign(base, 'PUT', LINKED)), {
      method: 'PUT',
      body: 'overwrite',
    });
    expect(overFile.status).toBe(409);
    expect(await readFile(join(test.root, 'outside.txt'), 'utf8')).toBe(SECRET_TEXT);

    const upload = await rawRequest(base, `/upload/${NEW_IN_LINKED_FOLDER}`);
    expect(outcomeOf(upload, 'envelope').statusCode).toBe(200);
    const intoFolder = await rawRequest(base, pathOf(outcomeOf(upload, 'envelope').body as string), {
      method: 'PUT',
      body: 'planted',
    });
    expect(intoFolder.status).toBe(400);
    expect(await readdir(join(test.root, 'elsewhere/l1a/2025/01'))).toEqual([
      IN_LINKED_FOLDER.split('/').pop(),
    ]);
    expect(await readdir(join(test.root, 'elsewhere/l1a/2025'))).toEqual(['01']);
  });
});

describe('signatures', () => {
  const OTHER_KEY = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250102_20250102_v01-00.cdf';

  function withParam(url: string, name: string, value: string): string {
    const parsed = new URL(url);
    parsed.searchParams.set(name, value);
    return `${parsed.pathname}${parsed.search}`;
  }

  it('a missing signature is a 403 saying so', async () => {
    const result = await rawRequest(base, `/objects/${KEY}`);
    expect(result.status).toBe(403);
    expect(result.text).toBe(
      'Missing signature: this URL needs X-Method, X-Expires and X-Signature; get one from /upload or /download.\n',
    );
  });

  it.each([
    ['a forged signature', (url: string) => withParam(url, 'X-Signature', 'ab'.repeat(32))],
    ['a signature that is not hex', (url: string) => withParam(url, 'X-Signature', 'zz')],
    [
      'a later expiry',
      (url: string) => withParam(url, 'X-Expires', String(Math.floor(Date.now() / 1000) + 999_999)),
    ],
    ['another method written in', (url: string) => withParam(url, 'X-Method', 'PUT')],
    ['another key', (url: string) => pathOf(url).replace(KEY, OTHER_KEY)],
    ['another secret', () => pathOf(new UrlSigner('another-secret-0123456789').sign(base, 'GET', KEY))],
  ])('%s is a 403 bad signature', async (_, tamper) => {
    const url = testSigner.sign(base, 'GET', KEY);
    const result = await rawRequest(base, tamper(url));
    expect(result.status).toBe(403);
    expect(result.text).toBe('Bad signature: this URL was not issued by this server for this object.\n');
  });

  it('an expired URL is a 403 saying when it expired', async () => {
    const now = Date.now();
    const url = testSigner.sign(base, 'GET', KEY, now - 86_400_000 - 5000);
    const expiredAt = new Date((Math.floor((now - 86_400_000 - 5000) / 1000) + 86_400) * 1000).toISOString();
    const result = await rawRequest(base, pathOf(url));
    expect(result.status).toBe(403);
    expect(result.text).toBe(`This URL expired at ${expiredAt}; ask for a new one.\n`);
  });

  it('an expired PUT URL stores nothing', async () => {
    const url = testSigner.sign(base, 'PUT', OTHER_KEY, Date.now() - 3_600_000 - 5000);
    const result = await rawRequest(base, pathOf(url), { method: 'PUT', body: 'late' });
    expect(result.status).toBe(403);
    expect(result.text).toMatch(/^This URL expired at /);
    expect(existsSync(join(test.storeDir, ...OTHER_KEY.split('/')))).toBe(false);
  });

  it.each([
    ['GET', 'PUT'],
    ['PUT', 'GET'],
    ['PUT', 'HEAD'],
  ] as const)('a URL signed for %s used with %s is a 403 saying which', async (signed, used) => {
    const url = testSigner.sign(base, signed, signed === 'PUT' ? OTHER_KEY : KEY);
    const result = await rawRequest(base, pathOf(url), {
      method: used,
      ...(used === 'PUT' ? { body: 'x' } : {}),
    });
    expect(result.status).toBe(403);
    if (used !== 'HEAD') expect(result.text).toBe(`This URL is signed for ${signed}, not ${used}.\n`);
    expect(existsSync(join(test.storeDir, ...OTHER_KEY.split('/')))).toBe(false);
  });

  it('a GET URL also serves HEAD', async () => {
    const result = await rawRequest(base, pathOf(testSigner.sign(base, 'GET', KEY)), { method: 'HEAD' });
    expect(result.status).toBe(200);
  });

  it('without a given secret, the store keeps one: URLs survive a restart and do not work on another store', async () => {
    const first = await startReferenceServer({ store: test.storeDir });
    const url = (
      outcomeOf(await rawRequest(first.url, `/download/${KEY}`), 'envelope').body as { download_url: string }
    ).download_url;
    await first.close();
    const again = await startReferenceServer({ store: test.storeDir });
    const other = await startTestServer({}, (store) => putStoreFile(store, KEY, 'other'));
    const otherUnsigned = await startReferenceServer({ store: other.storeDir, port: 0 });
    try {
      expect((await rawRequest(again.url, pathOf(url))).text).toBe('stored bytes');
      expect((await rawRequest(otherUnsigned.url, pathOf(url))).status).toBe(403);
      const secretFile = await readFile(join(test.storeDir, '.mission-data-secret'), 'utf8');
      expect(secretFile.trim()).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await again.close();
      await otherUnsigned.close();
      await other.cleanup();
    }
  });
});

/** Starts a PUT, sends `first` bytes of `length`, and returns controls to finish or drop it. */
function startPut(url: string, length: number, first: Buffer) {
  const parsed = new URL(url);
  let resolveStatus: (status: number) => void = () => undefined;
  const status = new Promise<number>((resolve) => {
    resolveStatus = resolve;
  });
  const req = httpRequest({
    host: parsed.hostname,
    port: parsed.port,
    path: `${parsed.pathname}${parsed.search}`,
    method: 'PUT',
    agent: false,
    headers: { 'Content-Length': String(length) },
  });
  req.on('response', (res) => {
    res.resume();
    resolveStatus(res.statusCode ?? 0);
  });
  req.on('error', () => resolveStatus(-1));
  req.write(first);
  return { status, finish: (rest: Buffer) => req.end(rest), drop: () => req.destroy() };
}

async function incomingFiles(): Promise<string[]> {
  return readdir(join(test.storeDir, '.incoming'));
}

describe('racing and vanishing uploads', () => {
  const NEW_KEY = 'imap/glows/l1a/2025/02/imap_glows_l1a_hist_20250201_20250201_v01-00.cdf';
  const SIZE = 1024 * 1024;

  it('two concurrent PUTs of one key: exactly one is stored, with its bytes; the other is a 409', async () => {
    const bodies = [Buffer.alloc(SIZE, 'a'), Buffer.alloc(SIZE, 'b')];
    const url = testSigner.sign(base, 'PUT', NEW_KEY);
    const puts = bodies.map((body) => startPut(url, SIZE, body.subarray(0, SIZE / 2)));
    // Both uploads are streaming into their temporary files before either finishes.
    expect(await eventually(async () => (await incomingFiles()).length === 2)).toBe(true);
    puts.forEach((put, i) => {
      put.finish((bodies[i] as Buffer).subarray(SIZE / 2));
    });
    const statuses = await Promise.all(puts.map((put) => put.status));
    expect([...statuses].sort()).toEqual([200, 409]);
    const winner = bodies[statuses.indexOf(200)] as Buffer;
    const stored = await rawRequest(base, pathOf(testSigner.sign(base, 'GET', NEW_KEY)));
    expect(stored.body.equals(winner)).toBe(true);
    expect(await incomingFiles()).toEqual([]);
    const records = outcomeOf(await rawRequest(base, '/query?instrument=glows'), 'envelope')
      .body as unknown[];
    expect(records).toHaveLength(1);
  });

  it('a client that disconnects mid-PUT leaves no object, no index entry and no temporary file', async () => {
    const url = testSigner.sign(base, 'PUT', NEW_KEY);
    const put = startPut(url, SIZE, Buffer.alloc(SIZE / 4, 'x'));
    expect(await eventually(async () => (await incomingFiles()).length === 1)).toBe(true);
    put.drop();
    expect(await eventually(async () => (await incomingFiles()).length === 0)).toBe(true);
    expect(existsSync(join(test.storeDir, ...NEW_KEY.split('/')))).toBe(false);
    expect(outcomeOf(await rawRequest(base, '/query?instrument=glows'), 'envelope').body).toEqual([]);
    expect(outcomeOf(await rawRequest(base, `/download/${NEW_KEY}`), 'envelope').statusCode).toBe(404);
    // The key is free: a new upload is offered and succeeds.
    expect(outcomeOf(await rawRequest(base, `/upload/${NEW_KEY}`), 'envelope').statusCode).toBe(200);
    expect((await rawRequest(base, pathOf(url), { method: 'PUT', body: 'whole' })).status).toBe(200);
  });

  it('close() during an upload ends it and leaves no temporary file', async () => {
    const put = startPut(testSigner.sign(base, 'PUT', NEW_KEY), SIZE, Buffer.alloc(1024, 'x'));
    expect(await eventually(async () => (await incomingFiles()).length === 1)).toBe(true);
    await test.server.close();
    expect(await put.status).toBe(-1);
    expect(await incomingFiles()).toEqual([]);
    expect(existsSync(join(test.storeDir, ...NEW_KEY.split('/')))).toBe(false);
  });
});

describe('restart', () => {
  it('a new server on the same store gives the same query answers', async () => {
    const names = [
      'imap_lo_l1a_de_20250105_20250105_v01-00.cdf',
      'imap_lo_l1a_de_20250105_20250105_v01-01.cdf',
      'imap_lo_l0_raw_20250105_20250105_v01-00.pkts',
      'imap_lo_star-sensor_20250101_v01-00.csv',
    ];
    for (const name of names) {
      const url = outcomeOf(await rawRequest(base, `/upload/${name}`), 'envelope').body as string;
      expect((await rawRequest(base, pathOf(url), { method: 'PUT', body: name })).status).toBe(200);
    }
    const searches = [
      'instrument=lo',
      'instrument=lo&version=latest',
      'table=ancillary',
      'table=science',
      `ingestion_start_date=${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`,
    ];
    const answers = async (url: string) =>
      Promise.all(searches.map(async (search) => (await rawRequest(url, `/query?${search}`)).text));
    const before = await answers(base);
    expect(JSON.parse(before[0] as string).body).toHaveLength(3);
    await test.server.close();
    const again = await startReferenceServer({
      store: test.storeDir,
      secret: 'test-secret-0123456789abcdef',
    });
    try {
      expect(await answers(again.url)).toEqual(before.map((text) => text.replaceAll(base, again.url)));
    } finally {
      await again.close();
    }
  });
});
