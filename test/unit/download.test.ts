import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePathList } from '../../src/cli/commands/download-input.js';
import { requestSettings } from '../../src/core/call-settings.js';
import { AbortedError, ApiError, NetworkError, UsageError, ValidationError } from '../../src/core/errors.js';
import { partPath, recordPath } from '../../src/data-root/part-names.js';
import { downloadFiles } from '../../src/download/engine.js';
import type { DownloadHttp, DownloadProgress } from '../../src/download/types.js';
import type { GetObjectOptions } from '../../src/http/objects.js';
import { HttpClient } from '../../src/service/client.js';
import { pattern } from '../helpers/bytes.js';
import { DISPATCH_PATHS } from '../helpers/dispatch-paths.js';
import { unixOnly } from '../helpers/platform.js';

const LINKS = unixOnly('symlinks');

/** Retries as the client's, with backoff short enough for a test. */
const REQUESTS = requestSettings({ retries: 3, retryBaseMs: 1, maxRetryAfterMs: 10 });

const NAME_A = 'imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';
const PATH_A = `imap/mag/l1a/2024/01/${NAME_A}`;
const NAME_B = 'imap_swe_l0_raw_20240215_20240215_v02-01.pkts';
const PATH_B = `imap/swe/l0/2024/02/${NAME_B}`;

/** How the test object server misbehaves for one object. */
interface Behaviour {
  /** Cut the connection after this many body bytes, for the first `times` answers. */
  dropAfter?: number;
  times?: number;
  /** After the first `times` answers, cut every answer after this many body bytes. */
  thenDropAfter?: number;
  /** Answer every Range request with the whole object (200). */
  ignoreRange?: boolean;
  /** Announce this Content-Range instead of the right one. */
  contentRange?: string;
  /** Send the headers and this many bytes, then wait until the client goes away. */
  hangAfter?: number;
  /** The same, for the first answer only. */
  hangFirstAfter?: number;
  /** Flip one byte in the middle of the body of the first this-many answers (the length stays right). */
  corrupt?: number;
  /** Send this ETag instead of the body's MD5 (e.g. an opaque one: nothing to verify with). */
  etag?: string;
  /** Leave out `Accept-Ranges: bytes` (a store that does not say it serves ranges). */
  noAcceptRanges?: boolean;
  /** Extra headers of whole-object (200) answers, such as a checksum the store states. */
  wholeHeaders?: Record<string, string>;
}

interface ObjectServer {
  url: string;
  objects: Map<string, Buffer>;
  behaviours: Map<string, Behaviour>;
  /** Range header of every object request, per path ('' without Range). */
  requests: Array<{ path: string; range: string }>;
  /** Body bytes sent, per path. */
  sent: Map<string, number>;
  inFlight: number;
  maxInFlight: number;
  /** Requests wait for this before answering, when set. */
  gate: Promise<void> | undefined;
  server: Server;
}

/** `x-amz-checksum-crc32` of some bytes: base64 of the CRC-32's 4 bytes, most significant first. */
function crc32Base64(bytes: Buffer): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes));
  return out.toString('base64');
}

async function startObjectServer(): Promise<ObjectServer> {
  const state: Omit<ObjectServer, 'url' | 'server'> = {
    objects: new Map(),
    behaviours: new Map(),
    requests: [],
    sent: new Map(),
    inFlight: 0,
    maxInFlight: 0,
    gate: undefined,
  };
  const answered = new Map<string, number>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = decodeURIComponent(
      new URL(request.url ?? '/', 'http://x').pathname.slice('/objects/'.length),
    );
    const range = request.headers.range ?? '';
    state.requests.push({ path, range });
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    response.on('close', () => {
      state.inFlight -= 1;
    });
    if (state.gate) await state.gate;
    const body = state.objects.get(path);
    if (!body) {
      response.writeHead(404).end('no such object');
      return;
    }
    const behaviour = state.behaviours.get(path) ?? {};
    const count = answered.get(path) ?? 0;
    answered.set(path, count + 1);
    const etag = behaviour.etag ?? `"${md5(body)}"`;
    const ifMatch = request.headers['if-match'];
    if (ifMatch !== undefined && ifMatch !== etag) {
      response.writeHead(412).end('precondition failed');
      return;
    }
    let start = 0;
    let end = body.length - 1;
    const match = /^bytes=(\d+)-(\d*)$/.exec(range);
    if (match && !behaviour.ignoreRange) {
      start = Number(match[1]);
      if (match[2]) end = Math.min(end, Number(match[2]));
    }
    let slice = body.subarray(start, end + 1);
    if (behaviour.corrupt !== undefined && count < behaviour.corrupt && slice.length > 0) {
      slice = Buffer.from(slice);
      const middle = Math.floor(slice.length / 2);
      slice[middle] = (slice[middle] ?? 0) ^ 0xff;
    }
    const headers: Record<string, string> = { 'content-length': String(slice.length), etag };
    if (!behaviour.noAcceptRanges) headers['accept-ranges'] = 'bytes';
    if (match && !behaviour.ignoreRange) {
      headers['content-range'] = behaviour.contentRange ?? `bytes ${start}-${end}/${body.length}`;
    } else Object.assign(headers, behaviour.wholeHeaders);
    const send = (bytes: Buffer) => state.sent.set(path, (state.sent.get(path) ?? 0) + bytes.length);
    response.writeHead(headers['content-range'] ? 206 : 200, headers);
    const hangAfter = count === 0 ? (behaviour.hangFirstAfter ?? behaviour.hangAfter) : behaviour.hangAfter;
    if (hangAfter !== undefined) {
      send(slice.subarray(0, hangAfter));
      response.write(slice.subarray(0, hangAfter));
      return;
    }
    const dropAfter =
      behaviour.dropAfter !== undefined && count < (behaviour.times ?? 1)
        ? behaviour.dropAfter
        : behaviour.thenDropAfter;
    if (dropAfter !== undefined) {
      send(slice.subarray(0, dropAfter));
      // FIN, not RST, a moment after the bytes: a body that ends with an error before the client reads what it
      // holds loses it (a loaded machine is slow to read), and the tests count on those bytes.
      response.write(slice.subarray(0, dropAfter), () => setTimeout(() => response.socket?.end(), 50));
      return;
    }
    send(slice);
    response.end(slice);
  };
  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, { url: `http://127.0.0.1:${port}`, server }) as ObjectServer;
}

const md5 = (buffer: Buffer) => createHash('md5').update(buffer).digest('hex');

/** The client whose object requests the suite sends (over the dispatch path it runs on). */
let objects: HttpClient;

/** A client with the contract's shape: addresses made up here, objects fetched by the client under test. */
function fakeClient(server: ObjectServer): DownloadHttp & { resolved: string[] } {
  const resolved: string[] = [];
  return {
    resolved,
    async resolveDownload(path: string, signal?: AbortSignal) {
      signal?.throwIfAborted();
      resolved.push(path);
      if (!server.objects.has(path)) {
        throw new ApiError(
          { method: 'GET', url: `/download/${path}`, status: 404, message: 'File not found' },
          { code: 'E_NOT_FOUND' },
        );
      }
      // A credential in the query string, as pre-signed URLs carry: messages must never show it.
      return `${server.url}/objects/${path}?signature=secret-sig`;
    },
    // Through the service client under test, over the dispatch path of the suite.
    getObject: (url: string, options: GetObjectOptions = {}) => objects.getObject(url, options),
  };
}

describe.each(DISPATCH_PATHS)('over $name', (path) => {
  let server: ObjectServer;
  let root: string;

  beforeEach(async () => {
    server = await startObjectServer();
    root = await mkdtemp(join(tmpdir(), 'mission-download-'));
    objects = new HttpClient({ url: server.url, retryBaseMs: 1, dispatcher: path.open() });
  });

  afterEach(async () => {
    server.server.closeAllConnections();
    await objects.close();
    const carried = await path.close();
    // A suite over undici that sent any object request sent it there.
    if (carried !== undefined && server.requests.length > 0) expect(carried).toBeGreaterThan(0);
    await new Promise((done) => server.server.close(done));
    await rm(root, { recursive: true, force: true });
  });

  /** Files below `folder`, sorted; the verified-download record is left out, and so are parts unless asked for. */
  async function filesUnder(folder: string, options: { parts?: boolean } = {}): Promise<string[]> {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && !entry.parentPath.includes('.mission-data'))
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((path) => options.parts || !/\.part\.\d+(\.json)?$/.test(path))
      .sort();
  }

  describe('downloadFiles', () => {
    it('writes each file at its place in the local layout, byte for byte', async () => {
      const a = pattern(3 * 1024 * 1024 + 17, 1);
      const b = pattern(1000, 2);
      server.objects.set(PATH_A, a);
      server.objects.set(PATH_B, b);
      const results = await downloadFiles(fakeClient(server), [PATH_A, NAME_B], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(results.map((result) => [result.path, result.status, result.bytes])).toEqual([
        [PATH_A, 'downloaded', a.length],
        [PATH_B, 'downloaded', b.length],
      ]);
      expect(md5(await readFile(join(root, PATH_A)))).toBe(md5(a));
      expect(await readFile(join(root, PATH_B))).toEqual(b);
      expect((await filesUnder(root)).sort()).toEqual([join(root, PATH_A), join(root, PATH_B)].sort());
    });

    it('downloads an empty file', async () => {
      server.objects.set(PATH_A, Buffer.alloc(0));
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result?.status).toBe('downloaded');
      expect((await readFile(join(root, PATH_A))).length).toBe(0);
    });

    it('resumes with Range from the bytes written after the connection drops mid-file', async () => {
      const body = pattern(2 * 1024 * 1024 + 5, 3);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { dropAfter: 700_000, times: 2 });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result?.status).toBe('downloaded');
      expect(md5(await readFile(join(root, PATH_A)))).toBe(md5(body));
      const ranges = server.requests.map((request) => request.range);
      expect(ranges).toHaveLength(3);
      expect(ranges[0]).toBe('');
      // Each resume asks for the bytes after the ones already on disk, which only grow.
      const starts = ranges.slice(1).map((range) => Number(/^bytes=(\d+)-$/.exec(range)?.[1]));
      expect(starts[0]).toBeGreaterThan(0);
      expect(starts[1]).toBeGreaterThan(starts[0] as number);
      expect(starts[1]).toBeLessThanOrEqual(1_400_000);
    });

    it('starts again from zero when the server answers a Range request with the whole file', async () => {
      const body = pattern(1024 * 1024, 4);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { dropAfter: 300_000, ignoreRange: true });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result?.status).toBe('downloaded');
      expect(md5(await readFile(join(root, PATH_A)))).toBe(md5(body));
      expect(server.requests).toHaveLength(2);
    });

    it('goes on while every answer brings bytes, however often they end early', async () => {
      const body = pattern(500_000, 5);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { dropAfter: 1000, times: 20 });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result?.status).toBe('downloaded');
      expect(md5(await readFile(join(root, PATH_A)))).toBe(md5(body));
      expect(server.requests).toHaveLength(21);
    });

    it('resumes a small file cut short from the bytes that came, as a large one', async () => {
      const body = pattern(100_000, 6);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { dropAfter: 30_000 });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: body.length });
      expect(await readFile(join(root, PATH_A))).toEqual(body);
      expect(server.requests.map((request) => request.range)).toEqual(['', 'bytes=30000-']);
    });

    it('fails with E_INCOMPLETE after retries + 1 answers that bring nothing, leaving its part to resume and the old file untouched', async () => {
      server.objects.set(PATH_A, pattern(500_000, 5));
      const client = fakeClient(server);
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      await writeFile(destination, 'previous contents');
      // After the first answer's 1,000 bytes, every answer ends before its first byte.
      server.behaviours.set(PATH_A, { dropAfter: 1000, times: 1, thenDropAfter: 0 });
      const [result] = await downloadFiles(client, [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        force: true,
      });
      expect(result?.status).toBe('failed');
      expect(result?.error).toMatchObject({ code: 'E_INCOMPLETE' });
      expect(result?.error?.message).toContain('received 1000 of 500000 bytes');
      expect(result?.error?.message).toContain('gave up after 5 attempts');
      expect(result?.error?.message).toMatch(new RegExp(`^GET ${server.url}/objects/${PATH_A}\\?…: `));
      expect(result?.error?.message).not.toContain('secret-sig');
      // The first answer, then retries + 1 (3 + 1) that brought nothing.
      expect(server.requests).toHaveLength(5);
      expect(await readFile(destination, 'utf8')).toBe('previous contents');
      expect(await filesUnder(root, { parts: true })).toEqual([
        destination,
        `${destination}.part.${process.pid}`,
        `${destination}.part.${process.pid}.json`,
      ]);
    });

    it('refuses a 206 whose Content-Range does not start where it asked', async () => {
      server.objects.set(PATH_A, pattern(100_000, 6));
      server.behaviours.set(PATH_A, { dropAfter: 10_000, contentRange: 'bytes 0-99999/100000' });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result?.status).toBe('failed');
      expect(result?.error).toMatchObject({ code: 'E_PROTOCOL' });
      expect(result?.error?.message).toMatch(
        `GET ${server.url}/objects/${PATH_A}?…: asked for bytes from 10000 but the answer holds bytes 0-99999/100000; refusing to splice it. 10000 bytes of 100000 are kept in `,
      );
      // The bytes held are good (the refused answer was not written): the part stays for the next run.
      expect((await filesUnder(root)).filter((file) => !file.includes('.part.'))).toEqual([]);
    });

    it('skips a verified file without a request, checks any other file first, and replaces everything with force', async () => {
      const body = pattern(4096, 7);
      server.objects.set(PATH_A, body);
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      await writeFile(destination, 'old');
      const [checked] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(checked).toMatchObject({ status: 'replaced', bytes: body.length, verified: true });
      expect(await readFile(destination)).toEqual(body);
      server.requests.length = 0;
      const [skipped] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(skipped).toMatchObject({ status: 'skipped', bytes: 0, verified: true, localPath: destination });
      expect(server.requests).toHaveLength(0);
      const [forced] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        force: true,
      });
      expect(forced).toMatchObject({ status: 'replaced', bytes: body.length });
      expect(await readFile(destination)).toEqual(body);
    });

    it('reports a missing file as failed, with the others downloaded', async () => {
      server.objects.set(PATH_B, pattern(10, 8));
      const results = await downloadFiles(fakeClient(server), [PATH_A, PATH_B], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(results.map((result) => result.status)).toEqual(['failed', 'downloaded']);
      expect(results[0]?.error).toMatchObject({ code: 'E_NOT_FOUND' });
      expect(existsSync(join(root, PATH_A))).toBe(false);
    });

    it('stops asking the service once it cannot be reached, leaving the other files not attempted', async () => {
      const paths = Array.from(
        { length: 10 },
        (_, day) =>
          `imap/mag/l1a/2024/01/imap_mag_l1a_norm_202401${String(day + 10)}_202401${String(day + 10)}_v01-00.cdf`,
      );
      await mkdir(dirname(join(root, ...(paths[9] ?? '').split('/'))), { recursive: true });
      await writeFile(join(root, ...(paths[9] ?? '').split('/')), 'here already');
      const asked: string[] = [];
      const refusing: DownloadHttp = {
        async resolveDownload(path) {
          asked.push(path);
          throw new NetworkError(`GET /download/${path}: connection refused.`, {
            code: 'E_CONNECTION_REFUSED',
            hint: 'Is the service running?',
          });
        },
        getObject: () => Promise.reject(new Error('never reached')),
      };
      const results = await downloadFiles(refusing, paths, {
        requests: REQUESTS,
        dataDir: root,
        concurrency: 2,
      });
      // At most the two files started together find the service unreachable; nothing is asked after that.
      expect(asked.length).toBeGreaterThanOrEqual(1);
      expect(asked.length).toBeLessThanOrEqual(2);
      expect(asked).toEqual(paths.slice(0, asked.length));
      for (const result of results.slice(0, asked.length)) {
        expect(result.error).toMatchObject({ code: 'E_CONNECTION_REFUSED' });
      }
      for (const result of results.slice(asked.length, 9)) {
        expect(result.status).toBe('failed');
        expect(result.error).toMatchObject({ code: 'E_NOT_ATTEMPTED', hint: 'Is the service running?' });
      }
      // A file that exists but was never verified needs the service to be checked: it is not attempted either.
      expect(results[9]).toMatchObject({ status: 'failed', error: { code: 'E_NOT_ATTEMPTED' } });
    });

    it('goes on after a file the service does not have: only an unreachable service stops a batch', async () => {
      server.objects.set(PATH_B, pattern(10, 8));
      const results = await downloadFiles(fakeClient(server), [PATH_A, PATH_B], {
        requests: REQUESTS,
        dataDir: root,
        concurrency: 1,
      });
      expect(results.map((result) => result.status)).toEqual(['failed', 'downloaded']);
    });

    it('downloads the same file given twice (as name and as path) once', async () => {
      server.objects.set(PATH_A, pattern(10, 9));
      const client = fakeClient(server);
      const results = await downloadFiles(client, [NAME_A, PATH_A, NAME_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(results).toHaveLength(1);
      expect(client.resolved).toEqual([PATH_A]);
      expect(server.requests).toHaveLength(1);
    });

    it('rejects invalid targets before any request, listing each problem', async () => {
      const client = fakeClient(server);
      const attempt = downloadFiles(
        client,
        [PATH_A, 'imap_xyz_l1a_norm_20240101_20240101_v01-00.cdf', '../x'],
        {
          requests: REQUESTS,
          dataDir: root,
        },
      );
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      const error = (await attempt.catch((e: unknown) => e)) as ValidationError;
      expect(error.problems).toHaveLength(2);
      expect(error.problems[0]).toContain('Invalid instrument');
      expect(error.problems[1]).toContain("'..'");
      expect(client.resolved).toEqual([]);
    });

    it('keeps at most `concurrency` downloads running at once', async () => {
      const paths: string[] = [];
      for (let day = 1; day <= 12; day += 1) {
        const date = `202403${String(day).padStart(2, '0')}`;
        const path = `imap/hit/l2/2024/03/imap_hit_l2_rates_${date}_${date}_v01-00.cdf`;
        server.objects.set(path, pattern(2000, day));
        paths.push(path);
      }
      let open: () => void = () => undefined;
      server.gate = new Promise((done) => {
        open = done;
      });
      const running = downloadFiles(fakeClient(server), paths, {
        requests: REQUESTS,
        dataDir: root,
        concurrency: 3,
      });
      // Every worker is parked at the gate once three requests have arrived.
      for (let wait = 0; wait < 200 && server.requests.length < 3; wait += 1) {
        await new Promise((done) => setTimeout(done, 10));
      }
      expect(server.requests).toHaveLength(3);
      open();
      const results = await running;
      expect(results.every((result) => result.status === 'downloaded')).toBe(true);
      expect(server.maxInFlight).toBe(3);
    });

    it('on abort, fails the transfers and leaves the started part, with its record, for the next run', async () => {
      server.objects.set(PATH_A, pattern(1024 * 1024, 10));
      server.behaviours.set(PATH_A, { hangAfter: 200_000 });
      server.objects.set(PATH_B, pattern(100, 11));
      const controller = new AbortController();
      const events: DownloadProgress[] = [];
      const results = await downloadFiles(fakeClient(server), [PATH_A, PATH_B], {
        requests: REQUESTS,
        dataDir: root,
        concurrency: 1,
        signal: controller.signal,
        onProgress: (event) => {
          events.push(event);
          // Some bytes of the first file are on disk: interrupt now.
          if (event.received > 0 && !event.done) controller.abort(new Error('Interrupted by SIGINT'));
        },
      });
      expect(results.map((result) => result.status)).toEqual(['failed', 'failed']);
      expect(results[0]?.error).toBeInstanceOf(AbortedError);
      // The file cut short reports the bytes it kept for a resume; the one never begun is not attempted.
      expect(results[0]?.bytes).toBeGreaterThan(0);
      expect(results[1]?.error).toMatchObject({ code: 'E_NOT_ATTEMPTED' });
      const part = `${join(root, PATH_A)}.part.${process.pid}`;
      expect(await filesUnder(root, { parts: true })).toEqual([part, `${part}.json`]);
      expect(events.filter((event) => event.done).map((event) => event.done)).toEqual(['failed', 'failed']);
    });

    it('one stream records how far it got while it runs, not only when it stops', async () => {
      const MIB = 1024 * 1024;
      server.objects.set(PATH_A, pattern(12 * MIB, 12));
      // The answer stops after 9 MiB and never ends: only a record written on the way can say what is on disk.
      server.behaviours.set(PATH_A, { hangAfter: 9 * MIB });
      const controller = new AbortController();
      const running = downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 1,
        signal: controller.signal,
      });
      const record = `${join(root, PATH_A)}.part.${process.pid}.json`;
      const written = async () =>
        Number(JSON.parse(await readFile(record, 'utf8').catch(() => '{}')).written ?? 0);
      const deadline = Date.now() + 10_000;
      while ((await written()) < 5 * MIB && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 10));
      // At most 4 MiB behind the 9 MiB on disk, before any failure wrote it.
      expect(await written()).toBeGreaterThanOrEqual(5 * MIB);
      controller.abort(new Error('Interrupted by SIGINT'));
      const [result] = await running;
      expect(result).toMatchObject({ status: 'failed', bytes: 9 * MIB });
      expect(await written()).toBe(9 * MIB);
    });

    it('reports progress ending at the file size', async () => {
      const body = pattern(3 * 1024 * 1024, 12);
      server.objects.set(PATH_A, body);
      const events: DownloadProgress[] = [];
      await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        onProgress: (e) => events.push(e),
      });
      const moving = events.filter((event) => !event.done);
      expect(moving.length).toBeGreaterThan(1);
      expect(moving.at(-1)).toMatchObject({ received: body.length, total: body.length });
      expect(events.at(-1)).toMatchObject({ done: 'downloaded', received: body.length });
    });
  });

  describe('paths read from stdin', () => {
    it('takes one path per line, ignoring blank lines and surrounding spaces', () => {
      expect(parsePathList(`${PATH_A}\r\n\n   \n  ${NAME_B}  \n`)).toEqual([PATH_A, NAME_B]);
      expect(parsePathList('')).toEqual([]);
    });

    it('takes the JSON array query --output-format json prints, or an array of paths', () => {
      const records = [{ file_path: PATH_A, instrument: 'mag' }, { file_path: PATH_B }];
      expect(parsePathList(JSON.stringify(records, null, 2))).toEqual([PATH_A, PATH_B]);
      expect(parsePathList(JSON.stringify([PATH_A, NAME_B]))).toEqual([PATH_A, NAME_B]);
      expect(parsePathList('[]')).toEqual([]);
    });

    it("takes query's CSV by its file_path column, wherever it is, quoted or not", () => {
      const csv = `instrument,file_path,note\r\nmag,${PATH_A},"a, b"\nmag,"${PATH_B}","say ""hi""\nthere"\n\n`;
      expect(parsePathList(csv)).toEqual([PATH_A, PATH_B]);
    });

    it("refuses query's table", () => {
      const table = `Instrument  Filename\n----------  --------\nmag         ${NAME_B}\n`;
      expect(() => parsePathList(table)).toThrow(/stdin holds query's table.*--output-format json/);
    });

    it('takes a single record', () => {
      expect(parsePathList(JSON.stringify({ file_path: PATH_A, version: 'v01-00' }))).toEqual([PATH_A]);
    });

    it.each([
      ['[1, 2', /stdin starts with '\[' but is not valid JSON/],
      ['{"file_path": ', /stdin starts with '\{' but is not valid JSON/],
      ['{"path": "x"}', /JSON object without a file_path/],
      [`["${PATH_A}", {"path": "x"}]`, /stdin JSON item 2 is neither a path nor a record/],
    ])('refuses %s with a usage error', (text, message) => {
      expect(() => parsePathList(text)).toThrow(UsageError);
      expect(() => parsePathList(text)).toThrow(message);
    });
  });

  /** The pid of a process that has ended: a dead owner of a leftover part. */
  function deadPid(): number {
    const pid = spawnSync(process.execPath, ['-e', '0']).pid;
    if (pid === undefined) throw new Error('could not start a process');
    return pid;
  }

  describe('integrity', () => {
    it('checks every byte against the MD5 the store states: one damaged transfer is fetched again', async () => {
      const body = pattern(300_000, 21);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { corrupt: 1 });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect(await readFile(join(root, PATH_A))).toEqual(body);
      expect(server.requests).toHaveLength(2);
    });

    it('fails with E_CHECKSUM when the bytes never match, leaving neither the file nor its part', async () => {
      server.objects.set(PATH_A, pattern(300_000, 22));
      server.behaviours.set(PATH_A, { corrupt: 100 });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'failed', verified: false, error: { code: 'E_CHECKSUM' } });
      expect(result?.error?.message).toMatch(/do not match the object's MD5 from its (ETag|Content-MD5)/);
      expect(await filesUnder(root, { parts: true })).toEqual([]);
    });

    it('checks a CRC-32 the store states (x-amz-checksum-crc32), the cheapest stated, in preference to the MD5', async () => {
      const good = pattern(300_000, 24);
      server.objects.set(PATH_A, good);
      server.behaviours.set(PATH_A, { wholeHeaders: { 'x-amz-checksum-crc32': crc32Base64(good) } });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect(await readFile(join(root, PATH_A))).toEqual(good);
      // A CRC-32 that does not describe the bytes fails the download although the ETag's MD5 matches them:
      // the CRC-32 is what was checked.
      const other = pattern(300_000, 25);
      server.objects.set(PATH_B, other);
      server.behaviours.set(PATH_B, { wholeHeaders: { 'x-amz-checksum-crc32': crc32Base64(good) } });
      const [bad] = await downloadFiles(fakeClient(server), [PATH_B], { requests: REQUESTS, dataDir: root });
      expect(bad).toMatchObject({ status: 'failed', error: { code: 'E_CHECKSUM' } });
      expect(bad?.error?.message).toMatch(/do not match the object's CRC32 from its x-amz-checksum-crc32/);
      expect(existsSync(join(root, PATH_B))).toBe(false);
    });

    it('catches one damaged byte with a CRC-32: in line for one stream, for parallel parts from the CRC-32 of each part', async () => {
      const cases = [
        { path: PATH_A, size: 300_000, seed: 26, connections: 1 },
        { path: PATH_B, size: 9 * 1024 * 1024, seed: 27, connections: 1 },
        // Split into 1 MiB parts: the first answer is read only up to its first part, so the second answer (a
        // part) is the damaged one; the whole download is fetched again.
        {
          path: `imap/mag/l1a/2024/01/${NAME_A.replace('20240101_20240101', '20240102_20240102')}`,
          size: 9 * 1024 * 1024,
          seed: 28,
          connections: 4,
        },
      ];
      for (const { path, size, seed, connections } of cases) {
        const body = pattern(size, seed);
        server.objects.set(path, body);
        const corrupt = connections > 1 ? 2 : 1;
        server.behaviours.set(path, { corrupt, wholeHeaders: { 'x-amz-checksum-crc32': crc32Base64(body) } });
        server.requests.length = 0;
        const [result] = await downloadFiles(fakeClient(server), [path], {
          requests: REQUESTS,
          dataDir: root,
          connections,
          partSize: 1024 * 1024,
        });
        expect(result).toMatchObject({ status: 'downloaded', verified: true });
        expect((await readFile(join(root, path))).equals(body)).toBe(true);
        // The damaged transfer was caught and the object fetched again.
        expect(server.requests).toHaveLength(connections > 1 ? 18 : 2);
      }
    });

    it('hashes a large object on a thread of its own, and still catches one damaged byte', async () => {
      const body = pattern(9 * 1024 * 1024, 44);
      server.objects.set(PATH_A, body);
      const [good] = await downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root });
      expect(good).toMatchObject({ status: 'downloaded', verified: true });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      server.objects.set(PATH_B, pattern(9 * 1024 * 1024, 45));
      server.behaviours.set(PATH_B, { corrupt: 100 });
      const [bad] = await downloadFiles(fakeClient(server), [PATH_B], { requests: REQUESTS, dataDir: root });
      expect(bad).toMatchObject({ status: 'failed', error: { code: 'E_CHECKSUM' } });
      expect(existsSync(join(root, PATH_B))).toBe(false);
    });

    it('downloads without a checksum when the store states none, and says the file is not verified', async () => {
      server.objects.set(PATH_A, pattern(1000, 23));
      server.behaviours.set(PATH_A, { etag: '"opaque-1"' });
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: false });
      // Not verified, so not trusted next time: the file is checked against the store again.
      server.requests.length = 0;
      const [again] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(again).toMatchObject({ status: 'replaced' });
      expect(server.requests.length).toBeGreaterThan(0);
    });

    it('replaces a truncated or edited file at the destination, and skips one that holds the stored bytes', async () => {
      const body = pattern(200_000, 24);
      server.objects.set(PATH_A, body);
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      await writeFile(destination, body.subarray(0, 1000));
      expect(
        (await downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root }))[0]?.status,
      ).toBe('replaced');
      expect(await readFile(destination)).toEqual(body);
      const edited = Buffer.from(body);
      edited[5] = (edited[5] ?? 0) ^ 1;
      await writeFile(destination, edited);
      expect(
        (await downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root }))[0]?.status,
      ).toBe('replaced');
      expect(await readFile(destination)).toEqual(body);
      // Placed by hand with the right bytes: checked (one ranged byte and a local hash), then trusted.
      await rm(join(root, '.mission-data'), { recursive: true });
      await writeFile(destination, body);
      server.requests.length = 0;
      expect(
        (await downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root }))[0],
      ).toMatchObject({
        status: 'skipped',
        verified: true,
      });
      expect(server.requests).toEqual([{ path: PATH_A, range: 'bytes=0-0' }]);
    });

    it('resumes after an interruption, fetching only the missing bytes', async () => {
      const body = pattern(2 * 1024 * 1024, 25);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { hangAfter: 700_000 });
      const controller = new AbortController();
      await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        signal: controller.signal,
        onProgress: (event) => {
          if (event.received >= 600_000 && !event.done) controller.abort(new Error('Interrupted by SIGINT'));
        },
      });
      const kept = (await filesUnder(root, { parts: true })).find((path) =>
        path.endsWith(`.part.${process.pid}`),
      );
      expect(kept).toBeDefined();
      const onDisk = (await readFile(kept as string)).length;
      expect(onDisk).toBeGreaterThan(0);
      server.behaviours.delete(PATH_A);
      server.sent.clear();
      server.requests.length = 0;
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: body.length - onDisk });
      expect(server.sent.get(PATH_A)).toBe(body.length - onDisk);
      expect(server.requests).toEqual([{ path: PATH_A, range: `bytes=${onDisk}-` }]);
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      expect(await filesUnder(root, { parts: true })).toEqual([join(root, PATH_A)]);
    });

    it('takes over the part of a dead process, and starts over when the object changed since', async () => {
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      const old = pattern(100_000, 26);
      const leftover = `${destination}.part.${deadPid()}`;
      await writeFile(leftover, old.subarray(0, 40_000));
      await writeFile(
        `${leftover}.json`,
        JSON.stringify({
          etag: `"${md5(old)}"`,
          size: old.length,
          written: 40_000,
          pid: 1,
          host: hostname(),
        }),
      );
      const current = pattern(100_000, 27);
      server.objects.set(PATH_A, current);
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect(await readFile(destination)).toEqual(current);
      // The resume asked for the old version (If-Match), got 412, and fetched the new one whole.
      expect(server.requests.map((request) => request.range)).toEqual(['bytes=40000-', '']);
      expect(await filesUnder(root, { parts: true })).toEqual([destination]);
    });

    it('resumes a part left under the names parts have always had, `<name>.part.<pid>` and its `.json` record', async () => {
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      const body = pattern(100_000, 28);
      server.objects.set(PATH_A, body);
      // Written by hand, not through the data root's naming: parts an earlier version left must still be found.
      const pid = deadPid();
      const leftover = `${destination}.part.${pid}`;
      expect(partPath(destination, pid)).toBe(leftover);
      expect(recordPath(leftover)).toBe(`${leftover}.json`);
      await writeFile(leftover, body.subarray(0, 40_000));
      await writeFile(
        `${leftover}.json`,
        JSON.stringify({ etag: `"${md5(body)}"`, size: body.length, written: 40_000, pid, host: hostname() }),
      );
      const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: 60_000 });
      expect(server.requests).toEqual([{ path: PATH_A, range: 'bytes=40000-' }]);
      expect(server.sent.get(PATH_A)).toBe(60_000);
      expect((await readFile(destination)).equals(body)).toBe(true);
      expect(await filesUnder(root, { parts: true })).toEqual([destination]);
    });

    it.skipIf(LINKS.missing)(
      LINKS.title(
        'never writes through a planted link: a leftover part that is a symlink is removed, not followed',
      ),
      async () => {
        const outside = await mkdtemp(join(tmpdir(), 'mission-outside-'));
        const victim = join(outside, 'victim.txt');
        await writeFile(victim, 'precious');
        const destination = join(root, PATH_A);
        await mkdir(dirname(destination), { recursive: true });
        const planted = `${destination}.part.${deadPid()}`;
        await symlink(victim, planted);
        await writeFile(
          `${planted}.json`,
          JSON.stringify({ etag: '"x"', size: 10, pid: 1, host: hostname() }),
        );
        await symlink(victim, `${destination}.part.${process.pid}`);
        await symlink(victim, `${destination}.part`);
        const body = pattern(5000, 28);
        server.objects.set(PATH_A, body);
        const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
          requests: REQUESTS,
          dataDir: root,
        });
        expect(result?.status).toBe('downloaded');
        expect(await readFile(victim, 'utf8')).toBe('precious');
        expect((await lstat(destination)).isFile()).toBe(true);
        expect(await readFile(destination)).toEqual(body);
        await rm(outside, { recursive: true, force: true });
      },
    );

    it.skipIf(LINKS.missing)(
      LINKS.title('refuses a folder on the way that is a symlink leading outside the data root, naming it'),
      async () => {
        const outside = await mkdtemp(join(tmpdir(), 'mission-outside-'));
        await mkdir(join(root, 'imap', 'mag'), { recursive: true });
        await symlink(outside, join(root, 'imap', 'mag', 'l1a'));
        server.objects.set(PATH_A, pattern(100, 29));
        const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
          requests: REQUESTS,
          dataDir: root,
        });
        expect(result).toMatchObject({ status: 'failed', error: { code: 'E_UNSAFE_PATH' } });
        expect(result?.error?.message).toContain(join(root, 'imap', 'mag', 'l1a'));
        expect(result?.error?.message).toContain('outside the data root');
        expect(await readdir(outside)).toEqual([]);
        await rm(outside, { recursive: true, force: true });
      },
    );

    it.skipIf(LINKS.missing)(
      LINKS.title('accepts a data root that is itself a symlink, and folders linked inside it'),
      async () => {
        const real = await mkdtemp(join(tmpdir(), 'mission-real-root-'));
        const linked = join(root, 'linked-root');
        await symlink(real, linked);
        server.objects.set(PATH_A, pattern(100, 30));
        const [result] = await downloadFiles(fakeClient(server), [PATH_A], {
          requests: REQUESTS,
          dataDir: linked,
        });
        expect(result?.status).toBe('downloaded');
        expect(await readFile(join(real, PATH_A))).toEqual(pattern(100, 30));
        await rm(real, { recursive: true, force: true });
      },
    );

    it('says up front, before any request, when the data root cannot take files', async () => {
      const blocker = join(root, 'a-file');
      await writeFile(blocker, 'x');
      server.objects.set(PATH_A, pattern(100, 31));
      const client = fakeClient(server);
      const error = await downloadFiles(client, [PATH_A], {
        requests: REQUESTS,
        dataDir: join(blocker, 'data'),
      }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'E_DATA_ROOT' });
      expect((error as Error).message).toMatch(
        /^Cannot make the data root .*a-file\/data: .*a-file is a file, not a folder\.$/,
      );
      expect(client.resolved).toEqual([]);
    });

    it('two batches of one process downloading one file both end with the right bytes', async () => {
      const body = pattern(1024 * 1024, 32);
      server.objects.set(PATH_A, body);
      const [first, second] = await Promise.all([
        downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root }),
        downloadFiles(fakeClient(server), [PATH_A], { requests: REQUESTS, dataDir: root }),
      ]);
      expect([first?.[0]?.status, second?.[0]?.status].sort()).toEqual(['downloaded', 'skipped']);
      expect(await readFile(join(root, PATH_A))).toEqual(body);
      expect(await filesUnder(root, { parts: true })).toEqual([join(root, PATH_A)]);
    });
  });

  describe('parallel ranged downloads', () => {
    const MIB = 1024 * 1024;
    let http: HttpClient;
    /** The test server's object routes through the client under test, addresses resolved as by fakeClient. */
    const objectClient = (): DownloadHttp => {
      const fake = fakeClient(server);
      return {
        resolveDownload: fake.resolveDownload,
        getObject: (url, options) => http.getObject(url, options),
      };
    };

    beforeEach(() => {
      http = objects;
    });

    it('fetches a large object as parts over several connections, byte-identical and verified', async () => {
      const body = pattern(5 * MIB + 123, 40);
      server.objects.set(PATH_A, body);
      // Once the first part flows, object requests wait until three are in flight at once (or 5 s pass).
      const together = async () => {
        const deadline = Date.now() + 5000;
        while (server.inFlight < 3 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 5));
      };
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 4,
        partSize: MIB,
        onProgress: () => {
          server.gate ??= together();
        },
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: body.length });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      expect(server.requests.map((request) => request.range).sort()).toEqual(
        [
          '',
          'bytes=1048576-2097151',
          'bytes=2097152-3145727',
          'bytes=3145728-4194303',
          `bytes=4194304-${body.length - 1}`,
          `bytes=5242880-${body.length - 1}`,
        ]
          .filter((range) => range !== `bytes=4194304-${body.length - 1}`)
          .concat(['bytes=4194304-5242879'])
          .sort(),
      );
      expect(server.maxInFlight).toBeGreaterThanOrEqual(3);
    });

    it('resumes each part on its own after a dropped connection, fetching no byte twice', async () => {
      const body = pattern(4 * MIB, 41);
      server.objects.set(PATH_A, body);
      // The first two answers (the first part, and the first range asked for) break off after 300,000 bytes.
      server.behaviours.set(PATH_A, { dropAfter: 300_000, times: 2 });
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 2,
        partSize: MIB,
      });
      // Every byte came over the network once: what a dropped answer brought is kept, the rest asked for.
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: body.length });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      const starts = server.requests.map((request) => Number(/^bytes=(\d+)-/.exec(request.range)?.[1] ?? 0));
      // The first range asked for (from the end of the cut first part) was itself cut and resumed mid-part.
      expect(starts).toContain(300_000);
      expect(starts.some((start) => start > 300_000 && start % MIB !== 0)).toBe(true);
    });

    it('goes on in parallel parts when it resumes a part left on disk, from its first missing byte', async () => {
      const body = pattern(6 * MIB, 46);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { hangAfter: 2 * MIB });
      const controller = new AbortController();
      await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 1,
        signal: controller.signal,
        onProgress: (event) => {
          if (event.received >= 1.5 * MIB && !event.done)
            controller.abort(new Error('Interrupted by SIGINT'));
        },
      });
      const kept = (await filesUnder(root, { parts: true })).find((path) =>
        path.endsWith(`.part.${process.pid}`),
      );
      const onDisk = (await readFile(kept as string)).length;
      expect(onDisk).toBeGreaterThan(0);
      server.behaviours.delete(PATH_A);
      server.requests.length = 0;
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: body.length - onDisk });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      // No byte on disk asked for again (nor received: `bytes` above), and the rest asked for as parts: the
      // resumed answer carries the first.
      const ranges = server.requests.map((request) => request.range);
      expect(ranges[0]).toBe(`bytes=${onDisk}-`);
      expect(ranges.length).toBeGreaterThanOrEqual(4);
      expect(ranges.slice(1).every((range) => Number(/^bytes=(\d+)-/.exec(range)?.[1]) >= onDisk + MIB)).toBe(
        true,
      );
    });

    /**
     * Downloads PATH_A (6 MiB, 1 MiB parts over 3 connections) while its first answer, which carries the first
     * part, stalls after 100,000 bytes and the other parts come whole; interrupts it once they are all on disk.
     * Resolves to the part left behind.
     */
    async function interruptWithFirstPartStalled(): Promise<string> {
      server.behaviours.set(PATH_A, { hangFirstAfter: 100_000 });
      const controller = new AbortController();
      await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
        signal: controller.signal,
        onProgress: (event) => {
          if (event.received >= 5 * MIB + 100_000 && !event.done)
            controller.abort(new Error('Interrupted by SIGINT'));
        },
      });
      server.behaviours.delete(PATH_A);
      const kept = (await filesUnder(root, { parts: true })).find((path) =>
        path.endsWith(`.part.${process.pid}`),
      );
      if (kept === undefined) throw new Error('the interrupted download left no part');
      return kept;
    }

    it('keeps the parts finished after a stalled first part when interrupted, and asks only for the rest', async () => {
      const body = pattern(6 * MIB, 47);
      server.objects.set(PATH_A, body);
      const kept = await interruptWithFirstPartStalled();
      const record = JSON.parse(await readFile(`${kept}.json`, 'utf8'));
      expect(record).toMatchObject({ written: 100_000, parts: [[MIB, 6 * MIB]] });
      server.requests.length = 0;
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
      });
      // Only the bytes between the first part's 100,000 and the finished parts came again.
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: MIB - 100_000 });
      expect(server.requests.map((request) => request.range)).toEqual([`bytes=100000-`]);
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      expect(await filesUnder(root, { parts: true })).toEqual([join(root, PATH_A)]);
    });

    it("takes over a killed run's parts when its first part never arrived: a range from byte 0 up to them", async () => {
      const body = pattern(6 * MIB, 49);
      server.objects.set(PATH_A, body);
      const destination = join(root, PATH_A);
      await mkdir(dirname(destination), { recursive: true });
      const leftover = `${destination}.part.${deadPid()}`;
      // What a run killed while its first part was stalled leaves: nothing from byte 0, the later parts whole.
      const onDisk = Buffer.concat([Buffer.alloc(MIB), body.subarray(MIB)]);
      await writeFile(leftover, onDisk);
      const record = { etag: `"${md5(body)}"`, size: body.length, written: 0, parts: [[MIB, 6 * MIB]] };
      await writeFile(`${leftover}.json`, JSON.stringify({ ...record, pid: 1, host: hostname() }));
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true, bytes: MIB });
      expect(server.requests.map((request) => request.range)).toEqual([`bytes=0-${body.length - 1}`]);
      expect((await readFile(destination)).equals(body)).toBe(true);
      expect(await filesUnder(root, { parts: true })).toEqual([destination]);
    });

    it('does not trust a record that names parts the part file does not hold: the checksum catches it', async () => {
      const body = pattern(6 * MIB, 48);
      server.objects.set(PATH_A, body);
      const kept = await interruptWithFirstPartStalled();
      // A neighbour (or a disk) spoils a finished part behind the record's back.
      const handle = await open(kept, 'r+');
      await handle.write(Buffer.alloc(1000), 0, 1000, 3 * MIB);
      await handle.close();
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
    });

    it('falls back to one stream when the store says nothing of ranges', async () => {
      const body = pattern(3 * MIB, 42);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { noAcceptRanges: true });
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        partSize: MIB,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect(server.requests).toEqual([{ path: PATH_A, range: '' }]);
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
    });

    it('falls back to one stream when the store answers a part with the whole object', async () => {
      const body = pattern(3 * MIB, 43);
      server.objects.set(PATH_A, body);
      server.behaviours.set(PATH_A, { ignoreRange: true });
      const [result] = await downloadFiles(objectClient(), [PATH_A], {
        requests: REQUESTS,
        dataDir: root,
        connections: 3,
        partSize: MIB,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect((await readFile(join(root, PATH_A))).equals(body)).toBe(true);
      expect(await filesUnder(root, { parts: true })).toEqual([join(root, PATH_A)]);
    });
  });
});
