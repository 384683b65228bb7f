import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSettings, transferSettings } from '../../src/core/call-settings.js';
import {
  AbortedError,
  ApiError,
  LocalFileError,
  type MissionDataError,
  ValidationError,
} from '../../src/core/errors.js';
import { readableBody } from '../../src/http/body.js';
import { HttpClient } from '../../src/service/client.js';
import {
  previewUploads,
  type UploadHttp,
  type UploadProgress,
  uploadFiles,
} from '../../src/upload/engine.js';
import { DISPATCH_PATHS } from '../helpers/dispatch-paths.js';

/** Retries as the client's, with backoff short enough for a test. */
const REQUESTS = requestSettings({ retryBaseMs: 1 });

const NAME_A = 'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';
const KEY_A = `imap/mag/l1a/2024/01/${NAME_A}`;
const NAME_B = 'imap_swe_l0_raw_20240215_20240215_v02-01.pkts';
const KEY_B = `imap/swe/l0/2024/02/${NAME_B}`;
const ANCILLARY = 'imap_mag_calibration_20240101_v01-00.json';
const ANCILLARY_KEY = `imap/ancillary/mag/${ANCILLARY}`;

interface Stored {
  key: string;
  url: string;
  body: Buffer;
  size: number;
  contentMd5: string | undefined;
}

async function _readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('base64');

/**
 * A client with the contract's shape whose PUTs reach a test store over HTTP. `existing` are keys the store holds
 * already, with their bytes (a plain MD5 ETag) or with an ETag of their own.
 */
function fakeClient(existing: Record<string, string | { bytes: string; etag: string }> = {}) {
  const presigned: string[] = [];
  const stored: Stored[] = [];
  const probes: string[] = [];
  const client: UploadHttp & { presigned: string[]; stored: Stored[]; probes: string[] } = {
    presigned,
    stored,
    probes,
    async presignUpload(key: string) {
      presigned.push(key);
      if (key in existing) {
        throw new ApiError(
          {
            method: 'GET',
            url: `/upload/${key}`,
            status: 409,
            message: `s3://bucket/${key} already exists.`,
          },
          { code: 'E_ALREADY_EXISTS' },
        );
      }
      return `http://objects.test/${key}?signature=x`;
    },
    // The bytes go over HTTP to the test store, through the client under test (the suite's dispatch path).
    async putObject(url, options) {
      const target = new URL(url);
      const sent = await objects.putObject(`${store.url}${target.pathname}${target.search}`, options);
      const received = store.received.get(target.pathname) as Received;
      stored.push({
        key: target.pathname.slice(1),
        url,
        body: received.body,
        size: Number(received.contentLength),
        contentMd5: received.contentMd5,
      });
      return sent;
    },
    async resolveDownload(path: string) {
      return `http://objects.test/${path}?signature=get`;
    },
    async getObject(url, options = {}) {
      const key = new URL(url).pathname.slice(1);
      probes.push(`${key} ${options.start}-${options.end}`);
      const held = existing[key];
      if (held === undefined) throw new Error(`no object ${key}`);
      const bytes = typeof held === 'string' ? held : held.bytes;
      const etag =
        typeof held === 'string' ? `"${createHash('md5').update(bytes).digest('hex')}"` : held.etag;
      return {
        status: 206,
        headers: { 'content-range': `bytes 0-0/${Buffer.byteLength(bytes)}`, etag },
        body: readableBody(Readable.from([Buffer.from(bytes).subarray(0, 1)])),
      };
    },
  };
  return client;
}

/** What the test store received for one path. */
interface Received {
  body: Buffer;
  contentLength: string | undefined;
  contentMd5: string | undefined;
}

/** An object store that takes every PUT whole and answers with the body's MD5 as its ETag. */
async function startStore(): Promise<{ url: string; server: Server; received: Map<string, Received> }> {
  const received = new Map<string, Received>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      received.set(new URL(request.url ?? '/', 'http://store').pathname, {
        body,
        contentLength: request.headers['content-length'],
        contentMd5: request.headers['content-md5'] as string | undefined,
      });
      response.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, received };
}

let home: string;
let dataDir: string;
let store: Awaited<ReturnType<typeof startStore>>;
/** The client whose PUTs the suite sends (over the dispatch path it runs on). */
let objects: HttpClient;
let dispatcher: Dispatcher | undefined;

describe.each(DISPATCH_PATHS)('over $name', (path) => {
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'mission-upload-'));
    dataDir = join(home, 'data');
    store = await startStore();
    dispatcher = path.open();
    objects = new HttpClient({ url: store.url, retryBaseMs: 1, dispatcher });
  });

  afterEach(async () => {
    await objects.close();
    const carried = await path.close();
    // A suite over undici that sent any PUT sent it there.
    if (carried !== undefined && store.received.size > 0) expect(carried).toBeGreaterThan(0);
    store.server.closeAllConnections();
    await new Promise((done) => store.server.close(done));
    await rm(home, { recursive: true, force: true });
  });

  async function place(path: string, contents: string | Buffer): Promise<string> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, contents);
    return path;
  }

  describe('uploadFiles', () => {
    it('finds a path inside the data root and sends it with its length and MD5', async () => {
      await place(join(dataDir, KEY_A), 'mag data');
      const client = fakeClient();
      const results = await uploadFiles(client, [KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(results).toEqual([
        { localPath: join(dataDir, KEY_A), key: KEY_A, status: 'uploaded', bytes: 8 },
      ]);
      expect(client.stored).toEqual([
        {
          key: KEY_A,
          url: `http://objects.test/${KEY_A}?signature=x`,
          body: Buffer.from('mag data'),
          size: 8,
          contentMd5: md5('mag data'),
        },
      ]);
    });

    it('sends no MD5 with checksum: false, and the same bytes', async () => {
      await place(join(dataDir, KEY_A), 'mag data');
      const client = fakeClient();
      const results = await uploadFiles(client, [KEY_A], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
        checksum: false,
      });
      expect(results).toMatchObject([{ status: 'uploaded', bytes: 8 }]);
      expect(client.stored).toEqual([
        expect.objectContaining({ body: Buffer.from('mag data'), size: 8, contentMd5: undefined }),
      ]);
    });

    it('looks in the data root first, then the working directory, then takes an absolute path', async () => {
      // The same relative path exists in both places: the data root wins.
      await place(join(dataDir, NAME_A), 'in data root');
      await place(join(home, NAME_A), 'in working directory');
      await place(join(home, 'elsewhere', NAME_B), 'in working directory only');
      const absolute = await place(join(home, 'abs', ANCILLARY), '{}');
      const client = fakeClient();
      const results = await uploadFiles(client, [NAME_A, `elsewhere/${NAME_B}`, absolute], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
      });
      expect(results.map((result) => [result.key, result.localPath, result.status])).toEqual([
        [KEY_A, join(dataDir, NAME_A), 'uploaded'],
        [KEY_B, join(home, 'elsewhere', NAME_B), 'uploaded'],
        [ANCILLARY_KEY, absolute, 'uploaded'],
      ]);
      const bodies = Object.fromEntries(client.stored.map((stored) => [stored.key, stored.body.toString()]));
      expect(bodies).toEqual({
        [KEY_A]: 'in data root',
        [KEY_B]: 'in working directory only',
        [ANCILLARY_KEY]: '{}',
      });
    });

    it('finds a bare file name at its place in the local layout', async () => {
      await place(join(dataDir, ...KEY_A.split('/')), 'where download puts it');
      const client = fakeClient();
      const [result] = await uploadFiles(client, [NAME_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(result).toMatchObject({ status: 'uploaded', localPath: join(dataDir, ...KEY_A.split('/')) });
      expect(client.stored[0]?.body.toString()).toBe('where download puts it');
    });

    it('names every place it looked when a file is missing, with the expected layout as a hint', async () => {
      const client = fakeClient();
      const [result] = await uploadFiles(client, [KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(result?.status).toBe('failed');
      expect(result?.error?.message).toContain(join(dataDir, KEY_A));
      expect(result?.error?.message).toContain(join(home, KEY_A));
      expect(result?.error).toMatchObject({ code: 'E_FILE_NOT_FOUND' });
      expect(result?.error).toBeInstanceOf(LocalFileError);
      expect(result?.error).toMatchObject({
        hint: expect.stringContaining('<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename>'),
      });
      expect(client.presigned).toEqual([]);
    });

    it('checks every name before any request and lists each bad file with its problems', async () => {
      await place(join(dataDir, KEY_A), 'fine');
      const client = fakeClient();
      const attempt = uploadFiles(
        client,
        [
          KEY_A,
          'imap_xyz_l1a_norm_20240101_20240101_v1.cdf',
          'notes.txt',
          'imap_mag_l0_raw_20240101_20240101_v01-00.cdf',
        ],
        { requests: REQUESTS, dataDir, cwd: home },
      );
      const error = (await attempt.catch((e: unknown) => e)) as ValidationError;
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.problems).toEqual([
        'imap_xyz_l1a_norm_20240101_20240101_v1.cdf: Invalid instrument. Please choose from ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi',
        'imap_xyz_l1a_norm_20240101_20240101_v1.cdf: Invalid version format. Please use vxx-xx format.',
        expect.stringContaining('notes.txt: Invalid filename notes.txt'),
        'imap_mag_l0_raw_20240101_20240101_v01-00.cdf: Invalid extension. Extension should be pkts for data level l0 and cdf for data level higher than l0',
      ]);
      expect(client.presigned).toEqual([]);
    });

    it('counts a file the store holds with the same bytes as done ("exists"), read with a one-byte GET', async () => {
      await place(join(dataDir, KEY_A), 'same bytes');
      await place(join(dataDir, KEY_B), 'b');
      const client = fakeClient({ [KEY_A]: 'same bytes' });
      const results = await uploadFiles(client, [KEY_A, KEY_B], { requests: REQUESTS, dataDir, cwd: home });
      expect(results.map((result) => result.status)).toEqual(['exists', 'uploaded']);
      expect(results[0]?.error).toBeUndefined();
      expect(client.probes).toEqual([`${KEY_A} 0-0`]);
      expect(client.stored.map((stored) => stored.key)).toEqual([KEY_B]);
    });

    it('fails a file the store holds with other bytes, naming the difference', async () => {
      await place(join(dataDir, KEY_A), 'local bytes');
      await place(join(dataDir, KEY_B), 'b');
      const client = fakeClient({ [KEY_A]: 'other bytes', [KEY_B]: 'a longer stored file' });
      const [sameSize, otherSize] = await uploadFiles(client, [KEY_A, KEY_B], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
      });
      expect(sameSize).toMatchObject({ status: 'failed', error: { code: 'E_ALREADY_EXISTS', status: 409 } });
      const localMd5 = createHash('md5').update('local bytes').digest('hex');
      const storedMd5 = createHash('md5').update('other bytes').digest('hex');
      expect(sameSize?.error?.message).toContain(
        `already stored with other bytes of the same size (11): the stored MD5 is ${storedMd5}, this file's ${localMd5}`,
      );
      expect(otherSize?.status).toBe('failed');
      expect(otherSize?.error?.message).toContain('the stored file has 20 bytes, this one 1');
      expect(client.stored).toEqual([]);
    });

    it('fails a stored file whose ETag is no MD5 (multipart): its bytes cannot be compared', async () => {
      await place(join(dataDir, KEY_A), 'abc');
      const client = fakeClient({ [KEY_A]: { bytes: 'abc', etag: '"0123456789abcdef0123456789abcdef-2"' } });
      const [result] = await uploadFiles(client, [KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(result?.status).toBe('failed');
      expect(result?.error?.message).toContain('the store states no MD5');
    });

    it('reports the MD5 pass as hashing progress before sending', async () => {
      await place(join(dataDir, KEY_A), Buffer.alloc(3 * 1024 * 1024, 7));
      const events: UploadProgress[] = [];
      await uploadFiles(fakeClient(), [KEY_A], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
        onProgress: (event) => events.push(event),
      });
      const hashing = events.filter((event) => event.phase === 'hashing');
      expect(hashing.at(-1)).toMatchObject({ hashed: 3 * 1024 * 1024, total: 3 * 1024 * 1024, sent: 0 });
      const firstSending = events.findIndex((event) => event.phase === 'sending');
      expect(firstSending).toBeGreaterThan(events.indexOf(hashing.at(-1) as UploadProgress));
      expect(events.at(-1)).toMatchObject({ done: 'uploaded' });
    });

    it.each([
      [401, 'the service asked for an API key (401)'],
      [403, 'the service refused the API key (403)'],
    ])(
      'stops the batch after a %i from the service: the other files are not attempted',
      async (status, why) => {
        const keys = [KEY_A, KEY_B, ANCILLARY_KEY];
        for (const key of keys) await place(join(dataDir, key), 'x');
        const client = fakeClient();
        client.presignUpload = async (key: string) => {
          client.presigned.push(key);
          // As the service client makes it: the route it asked is a field of the error.
          throw new ApiError(
            { method: 'GET', url: `http://service.test/upload/${key}`, status, message: 'Forbidden' },
            { route: 'upload' },
          );
        };
        const results = await uploadFiles(client, keys, {
          requests: REQUESTS,
          dataDir,
          cwd: home,
          concurrency: 1,
        });
        expect(client.presigned).toEqual([KEY_A]);
        expect(results.map((result) => result.status)).toEqual(['failed', 'failed', 'failed']);
        expect(results[1]?.error).toMatchObject({
          code: 'E_NOT_ATTEMPTED',
          message: `not attempted: ${why}`,
        });
      },
    );

    it('keeps going after a 403 from the object store (an expired address concerns one file)', async () => {
      await place(join(dataDir, KEY_A), 'a');
      await place(join(dataDir, KEY_B), 'b');
      const client = fakeClient();
      const put = client.putObject;
      client.putObject = async (url, options) => {
        if (url.includes(KEY_A)) {
          throw new ApiError({
            method: 'PUT',
            url: `http://objects.test/${KEY_A}?…`,
            status: 403,
            message: 'Expired',
          });
        }
        return put(url, options);
      };
      const results = await uploadFiles(client, [KEY_A, KEY_B], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
        concurrency: 1,
      });
      expect(results.map((result) => result.status)).toEqual(['failed', 'uploaded']);
    });

    it("takes the files at once from the transfer settings handed down, the call's own winning", async () => {
      const keys: string[] = [];
      for (let day = 1; day <= 9; day += 1) {
        const date = `202401${String(day).padStart(2, '0')}`;
        const key = `imap/mag/l1a/2024/01/imap_mag_l1a_norm_${date}_${date}_v01-00.cdf`;
        await place(join(dataDir, key), date);
        keys.push(key);
      }
      const client = fakeClient();
      const put = client.putObject;
      let inFlight = 0;
      let most = 0;
      client.putObject = async (url, options) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((done) => setTimeout(done, 20));
        inFlight -= 1;
        return put(url, options);
      };
      const transfer = transferSettings({ concurrency: 3 });
      const handed = await uploadFiles(client, keys, { requests: REQUESTS, transfer, dataDir, cwd: home });
      expect(handed.every((result) => result.status === 'uploaded')).toBe(true);
      expect(most).toBe(3);
      most = 0;
      client.stored.length = 0;
      await uploadFiles(client, keys, { requests: REQUESTS, transfer, concurrency: 2, dataDir, cwd: home });
      expect(most).toBe(2);
    });

    it('sends the same file given twice once', async () => {
      await place(join(dataDir, KEY_A), 'a');
      const client = fakeClient();
      const results = await uploadFiles(client, [KEY_A, KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(results).toHaveLength(1);
      expect(client.presigned).toEqual([KEY_A]);
    });

    it('fails a file that grows while it is being sent', async () => {
      const path = await place(join(dataDir, KEY_A), Buffer.alloc(3 * 1024 * 1024, 1));
      const client = fakeClient();
      const put = client.putObject;
      client.putObject = async (url, options) => {
        await appendFile(path, 'more');
        return put(url, options);
      };
      const [result] = await uploadFiles(client, [KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(result?.status).toBe('failed');
      expect(result?.error).toMatchObject({ code: 'E_FILE_CHANGED' });
      expect(result?.error?.message).toContain('changed while it was being uploaded');
      expect(result?.error?.message).toContain('nothing was stored');
    });

    it('fails a file that shrinks while it is being sent', async () => {
      const path = await place(join(dataDir, KEY_A), 'twelve bytes');
      const client = fakeClient();
      const put = client.putObject;
      client.putObject = async (url, options) => {
        await writeFile(path, 'short');
        return put(url, options);
      };
      const [result] = await uploadFiles(client, [KEY_A], { requests: REQUESTS, dataDir, cwd: home });
      expect(result?.error).toMatchObject({ code: 'E_FILE_CHANGED' });
    });

    it('stops when aborted, counting the files not begun as not started', async () => {
      await place(join(dataDir, KEY_A), 'a');
      await place(join(dataDir, KEY_B), 'b');
      const controller = new AbortController();
      controller.abort(new Error('Interrupted by SIGINT'));
      const client = fakeClient();
      const results = await uploadFiles(client, [KEY_A, KEY_B], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
        signal: controller.signal,
      });
      expect(results.map((result) => result.status)).toEqual(['failed', 'failed']);
      expect(results.map((result) => (result.error as MissionDataError | undefined)?.code)).toEqual([
        'E_NOT_ATTEMPTED',
        'E_NOT_ATTEMPTED',
      ]);
      expect(results[0]?.error?.cause).toBeInstanceOf(AbortedError);
      expect(client.presigned).toEqual([]);
    });
  });

  describe('uploadFiles with the HTTP client', () => {
    let server: Server;
    let url: string;
    const puts: Array<{ length: number; contentLength: string | undefined; md5: string | undefined }> = [];
    let stored: Buffer | undefined;

    beforeEach(async () => {
      puts.length = 0;
      stored = undefined;
      server = createServer((request, response) => {
        if (request.method === 'GET' && request.url?.startsWith('/upload/')) {
          const key = request.url.slice('/upload/'.length);
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ statusCode: 200, body: `${url}/objects/${key}?signature=x` }));
          return;
        }
        const chunks: Buffer[] = [];
        const attempt = puts.length;
        const record = {
          length: 0,
          contentLength: request.headers['content-length'],
          md5: request.headers['content-md5'] as string | undefined,
        };
        puts.push(record);
        request.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          record.length += chunk.length;
          // The first attempt breaks off after some bytes: the client must retry from the start of the file.
          if (attempt === 0 && record.length > 256 * 1024) request.socket.destroy();
        });
        request.on('end', () => {
          stored = Buffer.concat(chunks);
          response.writeHead(200, { etag: '"x"' }).end();
        });
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterEach(async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    });

    it('a retried PUT re-reads the file from its first byte', async () => {
      const contents = Buffer.alloc(2 * 1024 * 1024 + 3);
      for (let index = 0; index < contents.length; index += 1) contents[index] = (index * 7) & 0xff;
      await place(join(dataDir, KEY_A), contents);
      const http = new HttpClient({ url, retryBaseMs: 1, dispatcher });
      const events: UploadProgress[] = [];
      try {
        const [result] = await uploadFiles(http, [KEY_A], {
          requests: REQUESTS,
          dataDir,
          cwd: home,
          onProgress: (e) => events.push(e),
        });
        expect(result).toMatchObject({ status: 'uploaded', bytes: contents.length });
      } finally {
        await http.close();
      }
      expect(puts.length).toBe(2);
      expect(puts.every((put) => put.contentLength === String(contents.length))).toBe(true);
      expect(puts[1]?.md5).toBe(md5(contents));
      expect(stored?.equals(contents)).toBe(true);
      expect(events.at(-1)).toMatchObject({
        done: 'uploaded',
        sent: contents.length,
        total: contents.length,
      });
    });
  });

  describe('previewUploads', () => {
    it('names each file with its storage key and where it was found, or why not, without any request', async () => {
      await place(join(dataDir, KEY_A), 'mag data');
      const previews = await previewUploads([KEY_A, NAME_B], { dataDir, cwd: home });
      expect(previews[0]).toEqual({ argument: KEY_A, key: KEY_A, localPath: join(dataDir, KEY_A), size: 8 });
      expect(previews[1]).toMatchObject({ argument: NAME_B, key: KEY_B, localPath: undefined });
      expect(previews[1]?.error).toMatchObject({ code: 'E_FILE_NOT_FOUND' });
    });

    it('refuses bad names as uploadFiles does', async () => {
      await expect(previewUploads(['imap_bogus.cdf'], { dataDir, cwd: home })).rejects.toBeInstanceOf(
        ValidationError,
      );
    });
  });
});
