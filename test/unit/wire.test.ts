/**
 * The wire client's own protocol suite, against a raw TCP server that writes exactly the bytes each case needs:
 * heads split anywhere, bodies short, long and cut, ranges, resets, stalls, oversize heads, chunked and
 * close-delimited bodies, interim answers, uploads answered early, and keep-alive reuse and its failure.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/core/dispatch-faults.js';
import { WireClient } from '../../src/http/wire/pool.js';
import type { WireAnswer } from '../../src/http/wire/types.js';

/** One request as the server read it. */
interface Seen {
  head: string;
  body: Buffer;
  connection: number;
}

type Script = (socket: Socket, request: Seen) => void | Promise<void>;

const servers: Server[] = [];
const clients: WireClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise((resolve) => {
          server.close(resolve);
          (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
        }),
    ),
  );
});

/**
 * A server that reads each request (head, and a body of its Content-Length) and hands it to `script`, which
 * writes whatever answer the case needs. `script` is called once per request, in order, on any connection.
 */
async function rawServer(script: Script): Promise<{ url: string; seen: Seen[]; sockets: Socket[] }> {
  const seen: Seen[] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    const connection = sockets.push(socket);
    socket.on('error', () => undefined);
    // What came and is not yet a whole request; joined only when a request may be whole, so that a body of
    // megabytes costs one copy, not one per read (the server shares the test's thread with the client).
    let chunks: Buffer[] = [];
    let held = 0;
    let needed = 0;
    let busy = false;
    const next = async () => {
      if (busy || held < needed) return;
      const pending = Buffer.concat(chunks, held);
      chunks = [pending];
      const end = pending.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = pending.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      needed = end + 4 + length;
      if (held < needed) return;
      const request = { head, body: pending.subarray(end + 4, needed), connection };
      chunks = [pending.subarray(needed)];
      held -= needed;
      needed = 0;
      seen.push(request);
      busy = true;
      await script(socket, request);
      busy = false;
      await next();
    };
    socket.on('data', (data) => {
      chunks.push(data);
      held += data.length;
      void next();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, sockets };
}

function client(timeoutMs = 2_000): WireClient {
  const made = new WireClient({ timeoutMs });
  clients.push(made);
  return made;
}

/** Reads a whole body; resolves to its bytes and the error that ended it, if any. */
async function read(answer: WireAnswer): Promise<{ bytes: Buffer; error: unknown }> {
  const chunks: Buffer[] = [];
  const error = await answer.body.consume((chunk) => chunks.push(Buffer.from(chunk)));
  return { bytes: Buffer.concat(chunks), error };
}

const get = (url: string, path = '/object', headers: Record<string, string> = {}) => ({
  method: 'GET' as const,
  url: new URL(path, url),
  headers,
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the wire client', () => {
  it('reads a head split at every byte, then a body that comes in pieces', async () => {
    const body = Buffer.from('0123456789'.repeat(1000));
    const { url, seen } = await rawServer(async (socket) => {
      const head = `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nETag: "abc"\r\nX-Twice: a\r\nX-Twice: b\r\n\r\n`;
      for (const byte of Buffer.from(head)) {
        socket.write(Buffer.from([byte]));
        await delay(0);
      }
      socket.write(body.subarray(0, 3));
      await delay(5);
      socket.write(body.subarray(3));
    });
    const answer = await client().request(get(url, '/object?X-Amz-Signature=s', { range: 'bytes=0-' }));
    expect(answer.statusCode).toBe(200);
    expect(answer.headers.etag).toBe('"abc"');
    expect(answer.headers['x-twice']).toEqual(['a', 'b']);
    const { bytes, error } = await read(answer);
    expect(error).toBeUndefined();
    expect(bytes.equals(body)).toBe(true);
    expect(seen[0]?.head).toMatch(
      /^GET \/object\?X-Amz-Signature=s HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\nrange: bytes=0-$/,
    );
  });

  it('lends each chunk from one buffer: a consumer that keeps views without copying sees them overwritten', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 1) body[i] = i % 251;
    const { url } = await rawServer(async (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      for (let at = 0; at < body.length; at += 256 * 1024) {
        socket.write(body.subarray(at, at + 256 * 1024));
        await delay(2);
      }
    });
    const answer = await client().request(get(url));
    const copies: Buffer[] = [];
    const views = new Set<ArrayBufferLike>();
    const error = await answer.body.consume((chunk) => {
      copies.push(Buffer.from(chunk));
      views.add(chunk.buffer);
    });
    expect(error).toBeUndefined();
    expect(Buffer.concat(copies).equals(body)).toBe(true);
    // After the first read (copied aside while nobody consumed), every chunk is a view of the same memory.
    expect(views.size).toBeLessThanOrEqual(2);
  });

  it('an answer read whole before its reader came keeps its bytes: its connection serves no other meanwhile', async () => {
    const { url, seen } = await rawServer((socket, request) => {
      const n = /\/(\d+)/.exec(request.head)?.[1] as string;
      const body = n.repeat(1000);
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    const http = client();
    const answers: WireAnswer[] = [];
    // Each answer arrives whole; none is read before the next request goes out.
    for (let i = 0; i < 10; i += 1) answers.push(await http.request(get(url, `/${i}`)));
    const bodies = [];
    for (const answer of answers) bodies.push((await read(answer)).bytes.toString());
    expect(bodies).toEqual(Array.from({ length: 10 }, (_, i) => String(i).repeat(1000)));
    expect(new Set(seen.map((request) => request.connection)).size).toBe(10);
    // Once read, a connection serves again.
    expect((await read(await http.request(get(url, '/10')))).bytes.toString()).toBe('10'.repeat(1000));
    expect(seen.at(-1)?.connection).toBeLessThanOrEqual(10);
  });

  it('a body longer than its Content-Length is cut at that length, and its connection serves no more', async () => {
    const { url, seen } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA');
    });
    const http = client();
    const first = await read(await http.request(get(url)));
    expect(first.bytes.toString()).toBe('hello');
    await read(await http.request(get(url)));
    expect(seen.map((request) => request.connection)).toEqual([1, 2]);
  });

  it('keeps a connection alive between answers (empty, short and 206 bodies alike)', async () => {
    let n = 0;
    const { url, seen } = await rawServer((socket, request) => {
      n += 1;
      if (n === 1) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
      else if (n === 2) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
      else {
        const range = /range: bytes=(\d+)-(\d+)/.exec(request.head);
        socket.write(
          `HTTP/1.1 206 Partial Content\r\nContent-Range: bytes ${range?.[1]}-${range?.[2]}/10\r\nContent-Length: 3\r\n\r\nabc`,
        );
      }
    });
    const http = client();
    expect((await http.request(get(url))).statusCode).toBe(204);
    expect((await read(await http.request(get(url)))).bytes.length).toBe(0);
    const ranged = await http.request(get(url, '/o', { range: 'bytes=2-4' }));
    expect(ranged.statusCode).toBe(206);
    expect(ranged.headers['content-range']).toBe('bytes 2-4/10');
    expect((await read(ranged)).bytes.toString()).toBe('abc');
    expect(seen.map((request) => request.connection)).toEqual([1, 1, 1]);
    expect(http.stats).toEqual({ connections: 1, requests: 3, reused: 2 });
  });

  it('sends a request again on a new connection when the kept-alive one was closed by the server meanwhile', async () => {
    const { url, seen } = await rawServer((socket) => {
      // Answers as if it kept the connection, then closes it while it sits idle.
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const http = client();
    expect((await read(await http.request(get(url)))).bytes.toString()).toBe('ok');
    await delay(20);
    expect((await read(await http.request(get(url)))).bytes.toString()).toBe('ok');
    expect(seen.map((request) => request.connection)).toEqual([1, 2]);
  });

  it('a reused connection reset under a request is tried once more on a fresh one', async () => {
    let n = 0;
    const { url, seen } = await rawServer((socket) => {
      n += 1;
      if (n === 2) socket.resetAndDestroy();
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const http = client();
    await read(await http.request(get(url)));
    expect((await read(await http.request(get(url)))).bytes.toString()).toBe('ok');
    expect(seen.map((request) => request.connection)).toEqual([1, 1, 2]);
  });

  it('a fresh connection reset before an answer fails with ECONNRESET (not retried here)', async () => {
    const { url } = await rawServer((socket) => {
      socket.resetAndDestroy();
    });
    await expect(client().request(get(url))).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('keeps the bytes before an early close and says the body ended early', async () => {
    const { url } = await rawServer((socket) => {
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789');
    });
    const { bytes, error } = await read(await client().request(get(url)));
    expect(bytes.toString()).toBe('0123456789');
    expect(error).toMatchObject({ code: FAULTS.closed });
  });

  it('a stall in the head is a headers timeout, in the body a body timeout', async () => {
    const { url } = await rawServer((socket, request) => {
      if (request.head.includes('/body')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234');
      else socket.write('HTTP/1.1 200 OK\r\n');
    });
    const http = client(150);
    await expect(http.request(get(url, '/head'))).rejects.toMatchObject({ code: FAULTS.answerTimeout });
    const started = Date.now();
    const { bytes, error } = await read(await http.request(get(url, '/body')));
    expect(bytes.toString()).toBe('01234');
    expect(error).toMatchObject({ code: FAULTS.bodyTimeout });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('the idle timer counts from the last byte: a body slower in all than the timeout but never quiet for it is read', async () => {
    const { url } = await rawServer(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n');
      for (let at = 0; at < 8; at += 1) {
        await delay(60);
        socket.write(String(at));
      }
    });
    const started = Date.now();
    const { bytes, error } = await read(await client(300).request(get(url)));
    expect(error).toBeUndefined();
    expect(bytes.toString()).toBe('01234567');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it('an upload from a slow source, longer in all than the timeout but sending all along, is answered', async () => {
    const { url, seen } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    });
    const size = 8 * 1024 * 1024;
    const source = Buffer.alloc(size, 1);
    const started = Date.now();
    const answer = await client(300).request({
      method: 'PUT',
      url: new URL('/object', url),
      headers: {},
      upload: {
        size,
        // A slow disk: each read of a MiB takes 60 ms, the whole upload 0.48 s, more than the timeout.
        read: (into, position) => {
          const until = Date.now() + 60;
          while (Date.now() < until);
          return source.copy(into, 0, position, position + into.length);
        },
      },
    });
    expect(answer.statusCode).toBe(200);
    expect(seen[0]?.body.length).toBe(size);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it('refuses an oversize head, a malformed status line, a bad header and two lengths', async () => {
    const answers: Record<string, string> = {
      '/big': `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`,
      '/status': 'ICY 200 OK\r\n\r\n',
      '/header': 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
      '/lengths': 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
      '/both': 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
    };
    const { url } = await rawServer((socket, request) => {
      const path = request.head.split(' ')[1] as string;
      socket.write(answers[path] as string);
    });
    const http = client();
    await expect(http.request(get(url, '/big'))).rejects.toMatchObject({ code: FAULTS.headTooLarge });
    await expect(http.request(get(url, '/status'))).rejects.toMatchObject({ code: 'HPE_INVALID_CONSTANT' });
    await expect(http.request(get(url, '/header'))).rejects.toMatchObject({
      code: 'HPE_INVALID_HEADER_TOKEN',
    });
    await expect(http.request(get(url, '/lengths'))).rejects.toMatchObject({
      code: 'HPE_INVALID_CONTENT_LENGTH',
    });
    await expect(http.request(get(url, '/both'))).rejects.toMatchObject({
      code: 'HPE_UNEXPECTED_CONTENT_LENGTH',
    });
  });

  it('never sends a header value that would split the request', async () => {
    const { url, seen } = await rawServer(() => undefined);
    await expect(client().request(get(url, '/', { 'x-a': 'b\r\nx-injected: 1' }))).rejects.toMatchObject({
      code: 'ERR_INVALID_CHAR',
    });
    expect(seen).toEqual([]);
  });

  it('reads a chunked body in any split, with extensions and trailers, and keeps the connection', async () => {
    const wire = '5;name=x\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n';
    const { url, seen } = await rawServer(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      for (const piece of wire.match(/.{1,3}/gs) ?? []) {
        socket.write(piece);
        await delay(1);
      }
    });
    const http = client();
    expect((await read(await http.request(get(url)))).bytes.toString()).toBe('hello world');
    expect((await read(await http.request(get(url)))).bytes.toString()).toBe('hello world');
    expect(seen.map((request) => request.connection)).toEqual([1, 1]);
  });

  it('reads a whole body as bytes, of a stated length or chunked past any first guess, up to a limit', async () => {
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, at) => (at * 7919) % 251));
    const { url } = await rawServer(async (socket, request) => {
      if (request.head.startsWith('GET /stated')) {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
        socket.write(body);
        return;
      }
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      for (let at = 0; at < body.length; at += 40_000) {
        const piece = body.subarray(at, at + 40_000);
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
        await delay(1);
      }
      socket.write('0\r\n\r\n');
    });
    const http = client();
    const never = () => {
      throw new Error('not longer than the limit');
    };
    expect(await (await http.request(get(url, '/stated'))).body.bytes(1 << 20, never)).toEqual(body);
    expect(await (await http.request(get(url, '/chunked'))).body.bytes(1 << 20, never)).toEqual(body);
    let longer = 0;
    const cut = await (await http.request(get(url, '/chunked'))).body.bytes(100_000, () => {
      longer += 1;
    });
    expect(longer).toBe(1);
    expect(cut.length).toBeLessThanOrEqual(100_000);
    expect(cut).toEqual(body.subarray(0, cut.length));
  });

  it('refuses a chunked body whose chunk runs past its size', async () => {
    const { url } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n');
    });
    const { error } = await read(await client().request(get(url)));
    expect(error).toMatchObject({ code: 'HPE_STRICT' });
  });

  it('reads a body that runs to the close of an HTTP/1.0 connection, and skips interim answers', async () => {
    const { url } = await rawServer((socket) => {
      socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n');
      socket.end('HTTP/1.0 200 OK\r\n\r\nuntil the end');
    });
    const answer = await client().request(get(url));
    expect(answer.statusCode).toBe(200);
    expect(await read(answer)).toEqual({ bytes: Buffer.from('until the end'), error: undefined });
  });

  it('sends an upload from positioned reads, with its length, and checks the source before the last bytes', async () => {
    const source = Buffer.alloc(2.5 * 1024 * 1024, 7);
    const { url, seen } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nETag: "e"\r\nContent-Length: 0\r\n\r\n');
    });
    const reads: number[] = [];
    const sent: number[] = [];
    let checked = 0;
    const answer = await client().request({
      method: 'PUT',
      url: new URL('/object', url),
      headers: { 'content-length': String(source.length), 'content-md5': 'abc=' },
      upload: {
        size: source.length,
        read: (into, position) => {
          reads.push(position);
          return source.copy(into, 0, position, position + into.length);
        },
        check: () => {
          checked += 1;
        },
        onBytes: (bytes) => sent.push(bytes),
      },
    });
    expect(answer.statusCode).toBe(200);
    expect(seen[0]?.body.equals(source)).toBe(true);
    expect(reads).toEqual([0, 1024 * 1024, 2 * 1024 * 1024]);
    expect(sent.at(-1)).toBe(source.length);
    expect(checked).toBe(1);
  });

  it('an upload whose source changed fails with the source’s error, and sends no last bytes', async () => {
    const { url, seen } = await rawServer(() => undefined);
    const changed = new Error('changed while sent');
    await expect(
      client().request({
        method: 'PUT',
        url: new URL('/object', url),
        headers: { 'content-length': '10' },
        upload: {
          size: 10,
          read: (into) => into.fill(1).length,
          check: () => {
            throw changed;
          },
        },
      }),
    ).rejects.toBe(changed);
    await delay(20);
    expect(seen).toEqual([]);
  });

  it('an answer that comes before the upload is sent (a refusal) is read, and the rest is not sent', async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\nConnection: close\r\n\r\ndenied');
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    let read = 0;
    const answer = await client().request({
      method: 'PUT',
      url: new URL(`http://127.0.0.1:${port}/object`),
      headers: { 'content-length': String(64 * 1024 * 1024) },
      upload: {
        size: 64 * 1024 * 1024,
        read: (into) => {
          read += into.length;
          return into.length;
        },
      },
    });
    expect(answer.statusCode).toBe(403);
    expect(await answer.body.bytes(1024, () => undefined)).toEqual(Buffer.from('denied'));
    expect(read).toBeLessThan(64 * 1024 * 1024);
  });

  it('an abort mid-body ends the body with the abort, keeping what came', async () => {
    const { url } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n01234');
    });
    const controller = new AbortController();
    const answer = await client().request({ ...get(url), signal: controller.signal });
    const chunks: Buffer[] = [];
    const ended = answer.body.consume((chunk) => {
      chunks.push(Buffer.from(chunk));
      controller.abort();
    });
    expect(await ended).toMatchObject({ name: 'AbortError' });
    expect(Buffer.concat(chunks).toString()).toBe('01234');
  });

  it('dump keeps the connection for a short rest, destroy closes it', async () => {
    const { url, seen } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n0123');
      setTimeout(() => socket.write('4567'), 10);
    });
    const http = client();
    await (await http.request(get(url))).body.dump();
    await (await http.request(get(url))).body.destroy();
    await read(await http.request(get(url)));
    expect(seen.map((request) => request.connection)).toEqual([1, 1, 2]);
  });

  it('connect errors are the socket’s own (refused)', async () => {
    const { url } = await rawServer(() => undefined);
    const port = Number(new URL(url).port);
    await new Promise((resolve) => servers.pop()?.close(resolve));
    await expect(client().request(get(`http://127.0.0.1:${port}`))).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});
