/**
 * Every byte verified, every storage failure told: a store that cannot take an upload answers it (507 when
 * full, 500 naming the errno otherwise) instead of dropping the connection; stalled uploads are dropped;
 * every object carries the MD5 of its bytes; names the store cannot hold are refused.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatRequestLog } from '../../src/cli/commands/serve-log.js';
import { ApiError } from '../../src/core/errors.js';
import { MAX_NAME_BYTES, messages } from '../../src/naming/name-parts.js';
import { type ReferenceServer, type RequestLogEntry, startReferenceServer } from '../../src/server/index.js';
import { digestsOfFile } from '../../src/server/objects/checksums.js';
import { storeFailureAnswer } from '../../src/server/routes/object-put-route.js';
import { HttpClient } from '../../src/service/client.js';
import { mountTmpfs, unmount } from '../helpers/disk.js';
import { linuxOnly, unixOnly } from '../helpers/platform.js';
import { fileUpload } from '../helpers/uploads.js';
import {
  eventually,
  makeTempDir,
  outcomeOf,
  pathOf,
  putStoreFile,
  rawRequest,
  TEST_SECRET,
  testSigner,
} from './helpers.js';

// Counts how often an object is hashed from its file (rather than while it streamed in, or from its sidecar).
vi.mock('../../src/server/objects/checksums.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/server/objects/checksums.js')>();
  return { ...actual, digestsOfFile: vi.fn(actual.digestsOfFile) };
});
const hashedFromFile = vi.mocked(digestsOfFile);

const NAME = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const KEY = `imap/mag/l1a/2025/01/${NAME}`;
const SMALL_NAME = 'imap_mag_l1a_norm-mago_20250102_20250102_v01-00.cdf';
const MIB = 1024 * 1024;

/** A running server and the log entries of every request it answered. */
interface Served {
  server: ReferenceServer;
  entries: RequestLogEntry[];
  puts(): RequestLogEntry[];
}

async function serveStore(storeDir: string, options: { uploadIdleTimeoutMs?: number } = {}): Promise<Served> {
  const entries: RequestLogEntry[] = [];
  const server = await startReferenceServer({
    store: storeDir,
    secret: TEST_SECRET,
    log: (entry) => entries.push(entry),
    ...options,
  });
  return { server, entries, puts: () => entries.filter((entry) => entry.method === 'PUT') };
}

/** Uploads `source` with the project's own client (retries on, quick); resolves with the error, if any. */
async function uploadWithClient(url: string, name: string, source: string, size: number): Promise<unknown> {
  const client = new HttpClient({ url, retryBaseMs: 1 });
  try {
    const target = await client.presignUpload(name);
    await client.putObject(target, fileUpload(source, size));
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await client.close();
  }
}

/** Waits for the log entry of the one PUT, and checks that it is the only one: the client did not resend. */
async function theOnlyPut(served: Served): Promise<RequestLogEntry> {
  expect(await eventually(async () => served.puts().length > 0)).toBe(true);
  // Anything the client would resend arrives within its (1 ms based) backoff; give it time to show.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(served.puts()).toHaveLength(1);
  return served.puts()[0] as RequestLogEntry;
}

function errnoOf(entry: RequestLogEntry): unknown {
  return (entry.error as { code?: unknown } | undefined)?.code;
}

async function writeSource(folder: string, size: number): Promise<string> {
  const path = join(folder, `source-${size}.bin`);
  await writeFile(path, Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + (i >> 12)) % 251)));
  return path;
}

function md5Hex(bytes: Buffer | string): string {
  return createHash('md5').update(bytes).digest('hex');
}

/** `x-amz-checksum-crc32`: base64 of the CRC-32's 4 bytes, most significant first (computed independently). */
function crc32Base64(bytes: Buffer | string): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes));
  return out.toString('base64');
}

function md5Base64(bytes: Buffer | string): string {
  return createHash('md5').update(bytes).digest('base64');
}

const TMPFS = linuxOnly('tmpfs');
const PRLIMIT = linuxOnly('prlimit');
const LINKS = unixOnly('symlinks');

/** Whether this machine lets the tests mount a file system; the tests that need one say so when skipped. */
const CAN_MOUNT = (() => {
  const probe = mountTmpfs('64k');
  if (probe === undefined) return false;
  unmount(probe);
  return true;
})();

/** Sends an upload's head and whole body on a raw socket before reading anything, as a naive client does. */
function sendWholeThenRead(url: string, size: number): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Length: ${size}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(size, 'z'));
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

let work: string;
beforeAll(async () => {
  work = await makeTempDir('mission-storage-');
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});
beforeEach(() => {
  hashedFromFile.mockClear();
});

describe.runIf(CAN_MOUNT && !TMPFS.missing)(TMPFS.title('a full store (a tmpfs of 4 MiB)'), () => {
  let mount: string;
  let served: Served;
  let source: string;

  beforeAll(async () => {
    mount = mountTmpfs('4m') as string;
    source = await writeSource(work, 8 * MIB);
  });
  afterAll(() => unmount(mount));
  beforeEach(async () => {
    served = await serveStore(join(mount, 'store'));
  });
  afterEach(async () => {
    await served.server.close();
    await rm(join(mount, 'store'), { recursive: true, force: true });
  });

  it('answers the PUT 507 naming ENOSPC, once: the client gets the reason and does not resend the file', async () => {
    const error = await uploadWithClient(served.server.url, NAME, source, 8 * MIB);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(507);
    expect((error as ApiError).message).toContain('The store is full (ENOSPC); nothing was stored.');
    const put = await theOnlyPut(served);
    expect(put).toMatchObject({ status: 507, aborted: false });
    expect(errnoOf(put)).toBe('ENOSPC');
    expect(formatRequestLog(put)).toMatch(
      /^PUT \/objects\/imap\/mag\/\S+ 507 \(error ENOSPC\) \d+\.\dms id=\S+$/,
    );
    // Nothing is left behind, and the freed space takes a file that fits.
    const storeDir = served.server.store;
    expect(await readdir(join(storeDir, '.incoming'))).toEqual([]);
    expect(existsSync(join(storeDir, ...KEY.split('/')))).toBe(false);
    expect(outcomeOf(await rawRequest(served.server.url, '/query?instrument=mag'), 'envelope').body).toEqual(
      [],
    );
    const small = await writeSource(work, 1000);
    expect(await uploadWithClient(served.server.url, SMALL_NAME, small, 1000)).toBeUndefined();
  });

  it('a client that sends the whole body before reading still reads the 507, not a reset', async () => {
    const url = outcomeOf(await rawRequest(served.server.url, `/upload/${NAME}`), 'envelope').body as string;
    const answer = await sendWholeThenRead(url, 8 * MIB);
    expect(answer).toMatch(/^HTTP\/1\.1 507 Insufficient Storage\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.endsWith('\r\n\r\nThe store is full (ENOSPC); nothing was stored.\n')).toBe(true);
    expect(await readdir(join(served.server.store, '.incoming'))).toEqual([]);
  });
});

describe.runIf(CAN_MOUNT && !TMPFS.missing)(
  TMPFS.title('a read-only store (a tmpfs remounted read-only)'),
  () => {
    let mount: string;

    beforeAll(() => {
      mount = mountTmpfs('4m') as string;
    });
    afterAll(() => unmount(mount));

    it('answers the PUT 500 naming EROFS, once', async () => {
      const served = await serveStore(join(mount, 'store'));
      try {
        execFileSync('mount', ['-o', 'remount,ro', mount], { stdio: 'ignore' });
        const source = await writeSource(work, 3 * MIB);
        const error = await uploadWithClient(served.server.url, NAME, source, 3 * MIB);
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(500);
        expect((error as ApiError).message).toContain('The store is read-only (EROFS); nothing was stored.');
        const put = await theOnlyPut(served);
        expect(put).toMatchObject({ status: 500, aborted: false });
        expect(errnoOf(put)).toBe('EROFS');
        expect(formatRequestLog(put)).toMatch(/ 500 \(error EROFS\) /);
      } finally {
        await served.server.close();
      }
    });
  },
);

describe('stores that fail without any mount', () => {
  let storeDir: string;
  let served: Served;

  beforeEach(async () => {
    storeDir = join(await makeTempDir('mission-failing-'), 'store');
    served = await serveStore(storeDir);
  });
  afterEach(async () => {
    await served.server.close();
    await rm(join(storeDir, '..'), { recursive: true, force: true });
  });

  it.skipIf(PRLIMIT.missing)(
    PRLIMIT.title('a file size limit hit midway through the body (EFBIG) is a 500 naming it, answered once'),
    async () => {
      // The limit holds for the whole process: only a test file in a process of its own (vitest's forks pool)
      // may lower it without failing other files' writes.
      expect(isMainThread).toBe(true);
      const source = await writeSource(work, 8 * MIB);
      const pid = String(process.pid);
      const before = execFileSync('prlimit', ['--pid', pid, '--fsize', '--output', 'SOFT', '--noheadings'])
        .toString()
        .trim();
      // Node ignores SIGXFSZ, so a write past the limit fails with EFBIG, as on a file system with a size cap.
      execFileSync('prlimit', ['--pid', pid, `--fsize=${2 * MIB}:`]);
      let error: unknown;
      try {
        error = await uploadWithClient(served.server.url, NAME, source, 8 * MIB);
      } finally {
        execFileSync('prlimit', ['--pid', pid, `--fsize=${before}:`]);
      }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(500);
      expect((error as ApiError).message).toContain(
        'The object is larger than the store may write in one file (EFBIG); nothing was stored.',
      );
      // The errno travels as a field of the answer, for the client's failure policy.
      expect((error as ApiError).storeErrno).toBe('EFBIG');
      const put = await theOnlyPut(served);
      expect(put).toMatchObject({ status: 500, aborted: false });
      expect(errnoOf(put)).toBe('EFBIG');
      expect(await readdir(join(storeDir, '.incoming'))).toEqual([]);
      expect(existsSync(join(storeDir, ...KEY.split('/')))).toBe(false);
    },
  );

  it('an uploads folder replaced by a file after start (ENOTDIR) is a 500 naming it, answered once', async () => {
    await rm(join(storeDir, '.incoming'), { recursive: true });
    await writeFile(join(storeDir, '.incoming'), 'not a folder');
    const source = await writeSource(work, 2 * MIB);
    const error = await uploadWithClient(served.server.url, NAME, source, 2 * MIB);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(500);
    expect((error as ApiError).message).toContain(
      'Writing to the store failed (ENOTDIR); nothing was stored.',
    );
    const put = await theOnlyPut(served);
    expect(errnoOf(put)).toBe('ENOTDIR');
    expect(formatRequestLog(put)).toMatch(/ 500 \(error ENOTDIR\) /);
  });

  it('with Expect: 100-continue, a store that cannot open the upload answers before the body is sent', async () => {
    await rm(join(storeDir, '.incoming'), { recursive: true });
    await writeFile(join(storeDir, '.incoming'), 'not a folder');
    const url = new URL(testSigner.sign(served.server.url, 'PUT', KEY));
    const outcome = await new Promise<{ status: number; continued: boolean; text: string }>(
      (resolve, reject) => {
        let continued = false;
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: 'PUT',
          agent: false,
          headers: { 'Content-Length': '1000', Expect: '100-continue' },
        });
        req.on('continue', () => {
          continued = true;
          req.end(Buffer.alloc(1000));
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, continued, text }));
        });
        req.on('error', reject);
      },
    );
    expect(outcome).toEqual({
      status: 500,
      continued: false,
      text: 'Writing to the store failed (ENOTDIR); nothing was stored.\n',
    });
  });
});

describe('a store folder so deep that the folder and the key pass the path limit', () => {
  it('is a 500 answer naming ENAMETOOLONG, not silence', async () => {
    // Deep enough that the key's path passes 4,095 bytes, shallow enough that the uploads folder still works.
    let storeDir = await makeTempDir('mission-deep-');
    const top = storeDir;
    while (storeDir.length < 4040 - 201) storeDir = join(storeDir, 'd'.repeat(200));
    storeDir = join(storeDir, 'e'.repeat(4040 - storeDir.length - 1));
    expect(storeDir.length).toBe(4040);
    await mkdir(storeDir, { recursive: true });
    const served = await serveStore(storeDir);
    try {
      const result = await rawRequest(
        served.server.url,
        pathOf(testSigner.sign(served.server.url, 'PUT', KEY)),
        {
          method: 'PUT',
          body: 'bytes of a file',
        },
      );
      expect(result.status).toBe(500);
      expect(result.text).toContain('(ENAMETOOLONG); nothing was stored.');
      expect(result.headers['x-store-errno']).toBe('ENAMETOOLONG');
      const put = await theOnlyPut(served);
      expect(errnoOf(put)).toBe('ENAMETOOLONG');
      expect(await readdir(join(storeDir, '.incoming'))).toEqual([]);
    } finally {
      await served.server.close();
      await rm(top, { recursive: true, force: true });
    }
  });
});

describe('store failures by errno', () => {
  it.each([
    ['ENOSPC', 507, 'The store is full (ENOSPC); nothing was stored.'],
    ['EDQUOT', 507, "The store's disk quota is used up (EDQUOT); nothing was stored."],
    ['EROFS', 500, 'The store is read-only (EROFS); nothing was stored.'],
    ['EACCES', 500, 'The server may not write to the store (EACCES); nothing was stored.'],
    ['EPERM', 500, 'The server may not write to the store (EPERM); nothing was stored.'],
    ['EIO', 500, "The store's disk failed to write (EIO); nothing was stored."],
    ['EMFILE', 500, 'Writing to the store failed (EMFILE); nothing was stored.'],
  ])('%s is a %i saying so', (code, status, message) => {
    expect(storeFailureAnswer(code)).toEqual({ status, message });
  });
});

describe('stalled uploads', () => {
  it('200 uploads that stop sending are answered 408, their connections closed and their temporary files removed', async () => {
    const storeDir = join(await makeTempDir('mission-stall-'), 'store');
    const served = await serveStore(storeDir, { uploadIdleTimeoutMs: 300 });
    try {
      const url = new URL(testSigner.sign(served.server.url, 'PUT', KEY));
      const head = `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: 1000\r\n\r\n`;
      const answers = Array.from(
        { length: 200 },
        () =>
          new Promise<string>((resolve, reject) => {
            const socket = connect(Number(url.port), url.hostname, () => socket.write(`${head}a few bytes`));
            let answer = '';
            socket.on('data', (chunk: Buffer) => {
              answer += chunk.toString('latin1');
            });
            // Only the server closes these connections: the client never ends them.
            socket.on('close', () => resolve(answer));
            socket.on('error', reject);
          }),
      );
      const closed = await Promise.race([
        Promise.all(answers),
        new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 10_000)),
      ]);
      expect(closed).not.toBe('still open');
      for (const answer of closed as string[]) {
        expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
        expect(answer).toMatch(/\r\nContent-Type: text\/plain; charset=utf-8\r\n/);
        expect(answer).toMatch(/\r\nConnection: close\r\n/i);
        expect(answer).toContain(
          '\r\n\r\nNo bytes of the body arrived for 0.3 s: the upload was given up and nothing was stored.\n',
        );
      }
      expect(await eventually(async () => (await readdir(join(storeDir, '.incoming'))).length === 0)).toBe(
        true,
      );
      expect(served.puts().map((entry) => entry.status)).toEqual(Array(200).fill(408));
      expect(existsSync(join(storeDir, ...KEY.split('/')))).toBe(false);
    } finally {
      await served.server.close();
      await rm(join(storeDir, '..'), { recursive: true, force: true });
    }
  });

  it('an upload that keeps sending, however slowly, is not dropped', async () => {
    const storeDir = join(await makeTempDir('mission-slow-'), 'store');
    const served = await serveStore(storeDir, { uploadIdleTimeoutMs: 300 });
    try {
      const url = new URL(testSigner.sign(served.server.url, 'PUT', KEY));
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: 'PUT',
          agent: false,
          headers: { 'Content-Length': '8' },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        let sent = 0;
        // Eight bytes 150 ms apart: 1.2 s in all, four times the idle limit, never idle for as long as it.
        const timer = setInterval(() => {
          sent += 1;
          if (sent < 8) req.write('x');
          else {
            clearInterval(timer);
            req.end('x');
          }
        }, 150);
      });
      expect(status).toBe(200);
    } finally {
      await served.server.close();
      await rm(join(storeDir, '..'), { recursive: true, force: true });
    }
  });
});

describe('the MD5 of every object', () => {
  const BYTES = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 13) % 256));
  let storeDir: string;
  let served: Served;

  beforeEach(async () => {
    storeDir = join(await makeTempDir('mission-md5-'), 'store');
    await mkdir(storeDir, { recursive: true });
  });
  afterEach(async () => {
    await served.server.close();
    await rm(join(storeDir, '..'), { recursive: true, force: true });
  });

  async function put(bytes: Buffer = BYTES) {
    const url = outcomeOf(await rawRequest(served.server.url, `/upload/${NAME}`), 'envelope').body as string;
    return rawRequest(served.server.url, pathOf(url), { method: 'PUT', body: bytes });
  }

  function getUrl(server = served.server): string {
    return pathOf(testSigner.sign(server.url, 'GET', KEY));
  }

  it('is the ETag of the PUT answer, and GET and HEAD carry it with Content-MD5 and x-amz-checksum-crc32', async () => {
    served = await serveStore(storeDir);
    const stored = await put();
    expect(stored.status).toBe(200);
    expect(stored.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
    for (const method of ['GET', 'HEAD']) {
      const answer = await rawRequest(served.server.url, getUrl(), { method });
      expect(answer.status).toBe(200);
      expect(answer.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
      expect(answer.headers['content-md5']).toBe(md5Base64(BYTES));
      expect(answer.headers['x-amz-checksum-crc32']).toBe(crc32Base64(BYTES));
    }
    // Computed while the bytes streamed in: never read back from the file.
    expect(hashedFromFile).not.toHaveBeenCalled();
  });

  it('a 206 carries the ETag but no Content-MD5 or CRC-32, which would describe the whole object, not the part', async () => {
    served = await serveStore(storeDir);
    await put();
    const part = await rawRequest(served.server.url, getUrl(), { headers: { Range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
    expect(part.headers['content-md5']).toBeUndefined();
    expect(part.headers['x-amz-checksum-crc32']).toBeUndefined();
  });

  it('is kept in a sidecar under .checksums, with the size and mtime it was computed for', async () => {
    served = await serveStore(storeDir);
    await put();
    const sidecar = JSON.parse(await readFile(join(storeDir, '.checksums', ...KEY.split('/')), 'utf8'));
    const stats = await stat(join(storeDir, ...KEY.split('/')));
    expect(sidecar).toEqual({
      md5: md5Hex(BYTES),
      crc32: crc32(BYTES),
      size: BYTES.length,
      mtimeMs: stats.mtimeMs,
    });
  });

  it('a sidecar without a CRC-32 (written by an earlier version) is computed again and rewritten', async () => {
    await putStoreFile(storeDir, KEY, BYTES);
    const stats = await stat(join(storeDir, ...KEY.split('/')));
    const sidecarPath = join(storeDir, '.checksums', ...KEY.split('/'));
    await mkdir(join(sidecarPath, '..'), { recursive: true });
    await writeFile(
      sidecarPath,
      `${JSON.stringify({ md5: md5Hex(BYTES), size: BYTES.length, mtimeMs: stats.mtimeMs })}\n`,
    );
    served = await serveStore(storeDir);
    const head = await rawRequest(served.server.url, getUrl(), { method: 'HEAD' });
    expect(head.headers['x-amz-checksum-crc32']).toBe(crc32Base64(BYTES));
    expect(hashedFromFile).toHaveBeenCalledTimes(1);
    expect(JSON.parse(await readFile(sidecarPath, 'utf8')).crc32).toBe(crc32(BYTES));
  });

  it('survives a restart: a new server on the store answers the same ETag and Content-MD5 without hashing', async () => {
    served = await serveStore(storeDir);
    await put();
    await served.server.close();
    served = await serveStore(storeDir);
    const head = await rawRequest(served.server.url, getUrl(), { method: 'HEAD' });
    expect(head.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
    expect(head.headers['content-md5']).toBe(md5Base64(BYTES));
    expect(head.headers['x-amz-checksum-crc32']).toBe(crc32Base64(BYTES));
    expect(hashedFromFile).not.toHaveBeenCalled();
  });

  it('of an object placed by hand is computed on the first GETs, once however many come at a time, and saved', async () => {
    await putStoreFile(storeDir, KEY, BYTES);
    served = await serveStore(storeDir);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        rawRequest(served.server.url, getUrl(), { method: i % 2 === 0 ? 'GET' : 'HEAD' }),
      ),
    );
    for (const answer of answers) {
      expect(answer.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
      expect(answer.headers['content-md5']).toBe(md5Base64(BYTES));
    }
    expect(hashedFromFile).toHaveBeenCalledTimes(1);
    await served.server.close();
    served = await serveStore(storeDir);
    expect((await rawRequest(served.server.url, getUrl(), { method: 'HEAD' })).headers.etag).toBe(
      `"${md5Hex(BYTES)}"`,
    );
    expect(hashedFromFile).toHaveBeenCalledTimes(1);
  });

  it('is computed again when the object was replaced by hand since its sidecar was written', async () => {
    served = await serveStore(storeDir);
    await put();
    await served.server.close();
    const other = Buffer.from('other bytes, put there by hand');
    await putStoreFile(storeDir, KEY, other, new Date('2025-02-01T00:00:00Z'));
    served = await serveStore(storeDir);
    const head = await rawRequest(served.server.url, getUrl(), { method: 'HEAD' });
    expect(head.headers.etag).toBe(`"${md5Hex(other)}"`);
    expect(head.headers['content-md5']).toBe(md5Base64(other));
    expect(head.headers['x-amz-checksum-crc32']).toBe(crc32Base64(other));
  });

  it('If-Match with the ETag (alone, in a list, or *) is honoured; any other is a 412 on GET and HEAD', async () => {
    served = await serveStore(storeDir);
    const etag = `"${md5Hex(BYTES)}"`;
    await put();
    for (const ifMatch of [etag, `"0123", ${etag}`, '*']) {
      const answer = await rawRequest(served.server.url, getUrl(), { headers: { 'If-Match': ifMatch } });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(BYTES);
    }
    for (const ifMatch of [`"${md5Hex('other')}"`, `W/${etag}`]) {
      const get = await rawRequest(served.server.url, getUrl(), { headers: { 'If-Match': ifMatch } });
      expect(get.status).toBe(412);
      expect(get.headers.etag).toBe(etag);
      expect(get.text).toBe(`Precondition failed: the object's ETag is ${etag}, not ${ifMatch}.\n`);
      const head = await rawRequest(served.server.url, getUrl(), {
        method: 'HEAD',
        headers: { 'If-Match': ifMatch },
      });
      expect(head.status).toBe(412);
    }
  });

  it('If-None-Match (strong or weak) is a 304 and If-Range keeps its range with the MD5 ETag', async () => {
    served = await serveStore(storeDir);
    const etag = `"${md5Hex(BYTES)}"`;
    await put();
    for (const tag of [etag, `W/${etag}`]) {
      const answer = await rawRequest(served.server.url, getUrl(), { headers: { 'If-None-Match': tag } });
      expect(answer.status).toBe(304);
    }
    const ranged = await rawRequest(served.server.url, getUrl(), {
      headers: { Range: 'bytes=0-9', 'If-Range': etag },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.body).toEqual(BYTES.subarray(0, 10));
  });

  it.skipIf(LINKS.missing)(LINKS.title('sidecars are never read or written through symlinks'), async () => {
    const outside = join(storeDir, '..', 'outside');
    await mkdir(outside);
    // A forged record outside the store, with the right size and mtime but another digest.
    await putStoreFile(storeDir, KEY, BYTES);
    const { mtimeMs } = await stat(join(storeDir, ...KEY.split('/')));
    const forged = `${JSON.stringify({ md5: '0'.repeat(32), size: BYTES.length, mtimeMs })}\n`;
    await writeFile(join(outside, 'forged'), forged);
    await mkdir(join(storeDir, '.checksums', 'imap/mag/l1a/2025/01'), { recursive: true });
    await symlink(join(outside, 'forged'), join(storeDir, '.checksums', ...KEY.split('/')));
    // And a folder of sidecars that leads outside.
    await symlink(outside, join(storeDir, '.checksums', 'imap', 'hit'));
    served = await serveStore(storeDir);
    const head = await rawRequest(served.server.url, getUrl(), { method: 'HEAD' });
    expect(head.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
    expect(await readFile(join(outside, 'forged'), 'utf8')).toBe(forged);

    const hitName = 'imap_hit_l1a_count-rates_20250110_20250110_v01-00.cdf';
    const url = outcomeOf(await rawRequest(served.server.url, `/upload/${hitName}`), 'envelope')
      .body as string;
    const stored = await rawRequest(served.server.url, pathOf(url), { method: 'PUT', body: BYTES });
    expect(stored.status).toBe(200);
    expect(stored.headers.etag).toBe(`"${md5Hex(BYTES)}"`);
    expect((await readdir(outside)).sort()).toEqual(['forged']);
  });
});

describe('names the store cannot hold', () => {
  let served: Served;
  let storeDir: string;
  beforeAll(async () => {
    storeDir = join(await makeTempDir('mission-names-'), 'store');
    served = await serveStore(storeDir);
  });
  afterAll(async () => {
    await served.server.close();
    await rm(join(storeDir, '..'), { recursive: true, force: true });
  });

  /** A science name of exactly `length` characters, valid but for its length. */
  function longName(length: number): string {
    const fixed = 'imap_mag_l1a_'.length + '_20250101_20250101_v01-00.cdf'.length;
    return `imap_mag_l1a_${'x'.repeat(length - fixed)}_20250101_20250101_v01-00.cdf`;
  }

  function tooLong(name: string): string {
    return messages.tooLong(name, Buffer.byteLength(name));
  }

  it('GET /upload of a name of the longest length allowed hands out an upload URL', async () => {
    const name = longName(MAX_NAME_BYTES);
    const result = await rawRequest(served.server.url, `/upload/imap/mag/l1a/2025/01/${name}`);
    expect(outcomeOf(result, 'envelope').statusCode).toBe(200);
  });

  it.each([MAX_NAME_BYTES + 1, 253, 300, 10_000])(
    'GET /upload of a path with a %i-character name is a 400 saying so',
    async (length) => {
      const name = longName(length);
      expect(name).toHaveLength(length);
      const result = await rawRequest(served.server.url, `/upload/imap/mag/l1a/2025/01/${name}`);
      expect(outcomeOf(result, 'envelope')).toEqual({ statusCode: 400, body: tooLong(name) });
      expect(result.text).not.toContain('/objects/');
    },
  );

  it.each([MAX_NAME_BYTES + 1, 253, 300, 10_000])(
    'a signed PUT of a key with a %i-character name is a 400, answered',
    async (length) => {
      const name = longName(length);
      const url = testSigner.sign(served.server.url, 'PUT', `imap/mag/l1a/2025/01/${name}`);
      const result = await rawRequest(served.server.url, pathOf(url), { method: 'PUT', body: 'bytes' });
      expect(result.status).toBe(400);
      expect(result.text).toBe(`Invalid object key: ${tooLong(name)}\n`);
      expect(await readdir(join(storeDir, '.incoming'))).toEqual([]);
    },
  );
});
