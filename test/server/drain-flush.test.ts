/**
 * A drain never truncates an answer: a download read slowly, the drain begun mid-transfer, gets every byte its
 * Content-Length promised, even while its last bytes wait in the server's write buffer after the response ended
 * (where closing "idle" connections used to destroy it); an answer written whole with one `end()` counts as
 * under way until its bytes have left; and a connection whose request body is still arriving is not idle. Rounds
 * are repeated, as the loss came in some runs only; every server listens on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Connections } from '../../src/server/connections.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { Requests } from '../../src/server/shutdown.js';
import { outcomeOf, putStoreFile, rawRequest, startTestServer, type TestServer } from './helpers.js';

/**
 * The object, read at full speed but for its last `SLOW_TAIL` bytes, which come 1 MiB at a time with a pause of
 * 250 ms after each: longer than the 100 ms between the drain's closings of idle connections. The kernel's
 * socket buffers hold some 4 MiB, so the server ends its response during the slow tail, its last chunk still in
 * its own write buffer for a pause.
 */
// Not a whole number of the store's 1 MiB reads: the last write is short, so `end()` follows it at once,
// while that write is still in the server's buffer.
const SIZE = 24 * 1024 * 1024 - 300 * 1024;
const SLOW_TAIL = 10 * 1024 * 1024;
const BURST = { bytes: 1024 * 1024, pauseMs: 250 };
const READERS = 3;
const ROUNDS = 2;

const keyOf = (at: number) => {
  const day = `202501${10 + at}`;
  return `imap/mag/l1a/2025/01/imap_mag_l1a_norm_${day}_${day}_v01-00.cdf`;
};

let test: TestServer | undefined;
afterEach(async () => {
  await test?.cleanup();
  test = undefined;
});

/** What a slow reader got: the Content-Length promised and the body bytes that came before the connection ended. */
interface SlowRead {
  status: number;
  contentLength: number;
  received: number;
}

/**
 * GETs `path` on a raw connection and reads the answer, slowly in its tail; `onBody` is called once body bytes
 * arrive.
 * Resolves when the server ends the connection (it answers `Connection: close`).
 */
function slowGet(base: string, path: string, onBody: () => void): Promise<SlowRead> {
  const { hostname, port } = new URL(base);
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    let head = Buffer.alloc(0);
    let status = 0;
    let contentLength = -1;
    let received = 0;
    let inWindow = 0;
    let told = false;
    socket.on('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
    );
    socket.on('data', (chunk: Buffer) => {
      inWindow += chunk.length;
      if (contentLength < 0) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = head.subarray(0, end).toString('latin1');
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        contentLength = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0);
        received = head.length - end - 4;
      } else received += chunk.length;
      if (!told && received > 0) {
        told = true;
        onBody();
      }
      if (received < SIZE - SLOW_TAIL) inWindow = 0;
      else if (inWindow >= BURST.bytes) {
        socket.pause();
        setTimeout(() => {
          inWindow = 0;
          socket.resume();
        }, BURST.pauseMs);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolvePromise({ status, contentLength, received }));
  });
}

describe('a drain during slow downloads', () => {
  it('lets each finish whole, in every round: every byte of its Content-Length, nothing cut, exit as done', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const log: RequestLogEntry[] = [];
      const body = Buffer.alloc(SIZE, round + 1);
      test = await startTestServer({ log: (entry) => log.push(entry) }, async (store) => {
        for (let at = 0; at < READERS; at += 1) await putStoreFile(store, keyOf(at), body);
      });
      const { server } = test;
      const paths: string[] = [];
      for (let at = 0; at < READERS; at += 1) {
        const answer = await rawRequest(server.url, `/download/${keyOf(at)}`);
        const { download_url: url } = outcomeOf(answer, 'envelope').body as { download_url: string };
        const signed = new URL(url);
        paths.push(`${signed.pathname}${signed.search}`);
      }
      let started = 0;
      let drained: ReturnType<typeof server.drain> | undefined;
      // The drain begins once every reader has its first body bytes: mid-transfer for each.
      const reads = paths.map((path) =>
        slowGet(server.url, path, () => {
          started += 1;
          if (started === READERS) drained = server.drain(60_000);
        }),
      );
      const results = await Promise.all(reads);
      expect(drained).toBeDefined();
      const report = await drained;
      for (const result of results) {
        expect(result).toEqual({ status: 200, contentLength: SIZE, received: SIZE });
      }
      expect(report?.cut).toBe(0);
      const gets = log.filter((entry) => entry.route === '/objects/{key}');
      expect(gets).toHaveLength(READERS);
      for (const entry of gets) expect(entry).toMatchObject({ status: 200, aborted: false, bytes: SIZE });
      await test.cleanup();
      test = undefined;
    }
  }, 60_000);
});

describe('a drain while a refused upload still sends its body', () => {
  it('keeps the connection until the body has arrived, then closes it: the client reads its 403 and sends it all', async () => {
    test = await startTestServer();
    const { server } = test;
    // A stalled upload keeps the drain going for its bound.
    const answer = await rawRequest(server.url, '/upload/imap_mag_l2_norm_20250302_20250302_v01-00.cdf');
    const url = new URL(outcomeOf(answer, 'envelope').body as string);
    const stalled = connect(Number(url.port), url.hostname);
    stalled.on('error', () => undefined);
    stalled.write(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.hostname}\r\nContent-Length: 1000000\r\n\r\nxx`,
    );
    // A PUT whose signature is wrong is refused at once, while its body is still coming.
    const chunk = Buffer.alloc(32 * 1024, 1);
    const chunks = 24;
    const refused = connect(Number(url.port), url.hostname);
    let said = '';
    let failure: string | undefined;
    refused.on('data', (bytes: Buffer) => {
      said += bytes.toString('latin1');
    });
    let closed = false;
    refused.on('close', () => {
      closed = true;
    });
    refused.on('error', (error: NodeJS.ErrnoException) => {
      failure = error.code;
    });
    const wrong = `${url.pathname}?X-Method=PUT&X-Expires=${url.searchParams.get('X-Expires')}&X-Signature=wrong`;
    refused.write(
      `PUT ${wrong} HTTP/1.1\r\nHost: ${url.hostname}\r\nContent-Length: ${chunk.length * chunks}\r\n\r\n`,
    );
    refused.write(chunk);
    for (let wait = 0; wait < 100 && !said.includes('\r\n\r\n'); wait += 1) await pause(10);
    expect(said).toMatch(/^HTTP\/1\.1 403 /);
    const drained = server.drain(3_000);
    for (let sent = 1; sent < chunks; sent += 1) {
      await pause(40);
      expect({ sent, closed, failure }).toEqual({ sent, closed: false, failure: undefined });
      refused.write(chunk);
    }
    // Once the body has arrived, the connection is idle and the drain closes it.
    for (let wait = 0; wait < 50 && !closed; wait += 1) await pause(10);
    expect({ closed, failure }).toEqual({ closed: true, failure: undefined });
    expect((await drained).cut).toBe(1);
    refused.destroy();
    stalled.destroy();
  });
});

/** Resolves after `ms`. */
const pause = (ms: number) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

describe('an answer written with one end()', () => {
  let server: Server | undefined;
  let client: Socket | undefined;
  afterEach(async () => {
    client?.destroy();
    server?.closeAllConnections();
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    server = undefined;
  });

  it('is under way until its bytes have left: the drain waits, closing idle connections spares it', async () => {
    // Far more than the kernel's socket buffers take while the reader waits: most stays in the server's buffer.
    const body = Buffer.alloc(16 * 1024 * 1024, 7);
    const requests = new Requests();
    const listening = createServer((_req, res) => {
      const closed = new Promise<void>((done) => res.once('close', () => done()));
      void requests.run(async () => {
        res.writeHead(200, { 'Content-Length': String(body.length) });
        res.end(body);
      }, closed);
    });
    server = listening;
    const connections = new Connections(listening, false);
    await new Promise<void>((done) => listening.listen(0, '127.0.0.1', done));
    const { port } = listening.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    client = socket;
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((done) => socket.on('close', () => done()));
    const firstBytes = new Promise<void>((done) => socket.once('data', () => done()));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await firstBytes;
    socket.pause();
    let drained: boolean | undefined;
    const drain = requests.drain(30_000).then((idle) => {
      drained = idle;
    });
    for (let tick = 0; tick < 5; tick += 1) {
      connections.closeIdle();
      await pause(60);
    }
    expect(drained).toBeUndefined();
    expect(requests.running).toBe(1);
    expect(connections.size).toBe(1);
    socket.resume();
    await drain;
    expect(drained).toBe(true);
    // Now idle: the drain's closing of idle connections ends it, after every byte.
    connections.closeIdle();
    await ended;
    const answer = Buffer.concat(chunks);
    const headEnd = answer.indexOf('\r\n\r\n') + 4;
    expect(answer.subarray(0, headEnd).toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer.length - headEnd).toBe(body.length);
  });
});
