/**
 * The wire client where the server or the reader misbehaves: a kept-alive connection closed after part of an
 * answer (never sent again), a body nobody reads for a while (no stall), framing that is not CRLF or whose
 * trailers do not end, and an upload's length stated by the client itself.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/core/dispatch-faults.js';
import { WireClient } from '../../src/http/wire/pool.js';
import type { WireAnswer } from '../../src/http/wire/types.js';

/** One request as the server read it: its head, its body, and the connection (1, 2, …) it came on. */
interface Seen {
  head: string;
  path: string;
  body: Buffer;
  connection: number;
}

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

/** A server that reads each request (head, and a body of its Content-Length) and lets `script` answer it. */
async function rawServer(
  script: (socket: Socket, request: Seen) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    const connection = connections;
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (data) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const path = head.split(' ')[1] ?? '';
        const request = { head, path, body: pending.subarray(end + 4, end + 4 + length), connection };
        pending = pending.subarray(end + 4 + length);
        seen.push(request);
        script(socket, request);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

function client(timeoutMs = 2_000): WireClient {
  const made = new WireClient({ timeoutMs });
  clients.push(made);
  return made;
}

async function read(answer: WireAnswer): Promise<{ bytes: Buffer; error: unknown }> {
  const chunks: Buffer[] = [];
  const error = await answer.body.consume((chunk) => {
    chunks.push(Buffer.from(chunk));
  });
  return { bytes: Buffer.concat(chunks), error };
}

const get = (url: string, path: string) => ({ method: 'GET' as const, url: new URL(path, url), headers: {} });
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the wire client, when things go wrong', () => {
  it('does not send a request again once part of its answer came: a kept-alive connection closed mid-head', async () => {
    const { url, seen } = await rawServer((socket, request) => {
      if (request.path === '/first') socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      else socket.end('HTTP/1.1 200 OK\r\nContent-Le');
    });
    const http = client();
    expect((await read(await http.request(get(url, '/first')))).bytes.toString()).toBe('ok');
    const failed = await http.request(get(url, '/second')).then(
      () => undefined,
      (error: unknown) => error,
    );
    // The server saw it once, on the kept-alive connection: it may have acted on it.
    expect(seen.filter((request) => request.path === '/second').map((request) => request.connection)).toEqual(
      [1],
    );
    expect(failed).toMatchObject({ code: FAULTS.closed });
    expect((failed as Error).message).toBe("other side closed after part of the answer's head (GET /second)");
  });

  it('a body left unread for twice the timeout, then read, completes without a stall', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 5);
    const { url } = await rawServer((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body);
    });
    const answer = await client(150).request(get(url, '/object'));
    await delay(300);
    const { bytes, error } = await read(answer);
    expect(error).toBeUndefined();
    expect(bytes.equals(body)).toBe(true);
  });

  it('a body whose reader pauses it for twice the timeout (the part file behind) completes without a stall', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 6);
    const { url } = await rawServer((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body);
    });
    const answer = await client(150).request(get(url, '/object'));
    let got = 0;
    let caughtUp = false;
    let early = 0;
    const error = await answer.body.consume((chunk) => {
      if (got > 0 && !caughtUp) early += 1;
      got += chunk.length;
      if (got > chunk.length) return undefined;
      // The writer is behind: nothing more is handed over until it caught up.
      return delay(300).then(() => {
        caughtUp = true;
      });
    });
    expect(error).toBeUndefined();
    expect(early).toBe(0);
    expect(got).toBe(body.length);
  });

  it('refuses a bare LF ending a chunk size line, a chunk, or a trailer line, naming it', async () => {
    const framings: Record<string, string> = {
      '/size': '5\nhello\r\n0\r\n\r\n',
      '/data': '5\r\nhello\n0\r\n\r\n',
      '/trailer': '5\r\nhello\r\n0\r\nX-Trailer: t\n\r\n',
      '/last': '5\r\nhello\r\n0\r\n\n',
    };
    const { url } = await rawServer((socket, request) => {
      socket.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${framings[request.path]}`);
    });
    const http = client();
    for (const path of Object.keys(framings)) {
      const { error } = await read(await http.request(get(url, path)));
      expect(error, path).toMatchObject({ code: 'HPE_CR_EXPECTED' });
      expect((error as Error).message, path).toMatch(/bare LF ends/);
    }
  });

  it('refuses a thousand trailer lines', async () => {
    const trailers = Array.from({ length: 1000 }, (_, n) => `X-T${n}: ${n}\r\n`).join('');
    const { url } = await rawServer((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n${trailers}\r\n`);
    });
    const { bytes, error } = await read(await client().request(get(url, '/object')));
    expect(bytes.toString()).toBe('ok');
    expect(error).toMatchObject({ code: 'HPE_HEADER_OVERFLOW' });
    expect((error as Error).message).toMatch(/trailer/);
  });

  it('states an upload’s Content-Length from its size, whatever the caller wrote', async () => {
    const source = Buffer.from('twelve bytes');
    const { url, seen } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    });
    const http = client();
    const upload = {
      size: source.length,
      read: (into: Buffer, position: number) => source.copy(into, 0, position),
    };
    for (const headers of [{}, { 'Content-Length': '3' }]) {
      const answer = await http.request({ method: 'PUT', url: new URL('/object', url), headers, upload });
      await read(answer);
    }
    expect(seen.map((request) => request.body.toString())).toEqual(['twelve bytes', 'twelve bytes']);
    for (const request of seen)
      expect(request.head.match(/content-length: *(\d+)/gi)).toEqual(['content-length: 12']);
  });
});
