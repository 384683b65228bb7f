import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortedError, ApiError, LocalFileError, ValidationError } from '../../src/errors.js';
import { HttpClient } from '../../src/service.js';
import { type UploadHttp, type UploadProgress, uploadFiles } from '../../src/upload.js';

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

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A client with the contract's shape that keeps what is "uploaded" in memory. */
function fakeClient(existing: string[] = []) {
  const presigned: string[] = [];
  const stored: Stored[] = [];
  const client: UploadHttp & { presigned: string[]; stored: Stored[] } = {
    presigned,
    stored,
    async presignUpload(key: string) {
      presigned.push(key);
      if (existing.includes(key)) {
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
    async putObject(url, options) {
      const body = await readAll(options.open());
      options.onBytes?.(body.length);
      stored.push({
        key: new URL(url).pathname.slice(1),
        url,
        body,
        size: options.size,
        contentMd5: options.contentMd5,
      });
      return { etag: undefined };
    },
  };
  return client;
}

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('base64');

let home: string;
let dataDir: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-upload-'));
  dataDir = join(home, 'data');
});

afterEach(async () => {
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
    const results = await uploadFiles(client, [KEY_A], { dataDir, cwd: home });
    expect(results).toEqual([{ localPath: join(dataDir, KEY_A), key: KEY_A, status: 'uploaded', bytes: 8 }]);
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
    const results = await uploadFiles(client, [KEY_A], { dataDir, cwd: home, checksum: false });
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
    const [result] = await uploadFiles(client, [NAME_A], { dataDir, cwd: home });
    expect(result).toMatchObject({ status: 'uploaded', localPath: join(dataDir, ...KEY_A.split('/')) });
    expect(client.stored[0]?.body.toString()).toBe('where download puts it');
  });

  it('names every place it looked when a file is missing, with the expected layout as a hint', async () => {
    const client = fakeClient();
    const [result] = await uploadFiles(client, [KEY_A], { dataDir, cwd: home });
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
      { dataDir, cwd: home },
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

  it('reports a file the store holds already as "exists" without sending it', async () => {
    await place(join(dataDir, KEY_A), 'a');
    await place(join(dataDir, KEY_B), 'b');
    const client = fakeClient([KEY_A]);
    const results = await uploadFiles(client, [KEY_A, KEY_B], { dataDir, cwd: home });
    expect(results.map((result) => result.status)).toEqual(['exists', 'uploaded']);
    expect(results[0]?.error).toMatchObject({ code: 'E_ALREADY_EXISTS' });
    expect(client.stored.map((stored) => stored.key)).toEqual([KEY_B]);
  });

  it('sends the same file given twice once', async () => {
    await place(join(dataDir, KEY_A), 'a');
    const client = fakeClient();
    const results = await uploadFiles(client, [KEY_A, KEY_A], { dataDir, cwd: home });
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
    const [result] = await uploadFiles(client, [KEY_A], { dataDir, cwd: home });
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
    const [result] = await uploadFiles(client, [KEY_A], { dataDir, cwd: home });
    expect(result?.error).toMatchObject({ code: 'E_FILE_CHANGED' });
  });

  it('stops when aborted, marking the files not sent as failed', async () => {
    await place(join(dataDir, KEY_A), 'a');
    await place(join(dataDir, KEY_B), 'b');
    const controller = new AbortController();
    controller.abort(new Error('Interrupted by SIGINT'));
    const client = fakeClient();
    const results = await uploadFiles(client, [KEY_A, KEY_B], {
      dataDir,
      cwd: home,
      signal: controller.signal,
    });
    expect(results.map((result) => result.status)).toEqual(['failed', 'failed']);
    expect(results[0]?.error).toBeInstanceOf(AbortedError);
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
    const http = new HttpClient({ url, retryBaseMs: 1 });
    const events: UploadProgress[] = [];
    try {
      const [result] = await uploadFiles(http, [KEY_A], {
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
    expect(events.at(-1)).toMatchObject({ done: 'uploaded', sent: contents.length, total: contents.length });
  });
});
