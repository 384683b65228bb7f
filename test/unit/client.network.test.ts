import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { commandLineHint } from '../../src/cli/hints.js';
import { NetworkError } from '../../src/core/errors.js';
import { HttpClient } from '../../src/service/client.js';
import { MAG_RECORD } from '../helpers/records.js';
import { bytesUpload } from '../helpers/uploads.js';

const servers: Server[] = [];
const clients: HttpClient[] = [];

/** A real HTTP server on 127.0.0.1, port 0; `sockets` counts the connections it accepted. */
async function serve(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer(handle);
  server.on('connection', (socket) => sockets.add(socket));
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

function newClient(
  url: string,
  options: Partial<ConstructorParameters<typeof HttpClient>[0]> = {},
): HttpClient {
  const client = new HttpClient({ url, retryBaseMs: 1, ...options });
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
    ),
  );
});

describe('the client over real sockets', () => {
  it('a refused connection is tried again, then said with the URL in use and how to change it', async () => {
    const { url } = await serve(() => undefined);
    const server = servers.pop() as Server;
    await new Promise<void>((done) => server.close(() => done()));
    const client = newClient(url, { retries: 1, retryBaseMs: 1 });
    const error = await client.query({ instrument: 'mag' }).catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'E_CONNECTION_REFUSED' });
    expect((error as Error).message).toBe(
      `GET ${url}/query?instrument=mag&offset=0&limit=10000: connection refused (nothing is listening at ${new URL(url).host}). (gave up after 2 attempts)`,
    );
    // The library names the URL; the command line adds how to change it.
    expect((error as NetworkError).hint).toBe(`Is the service running? ${url} is the service URL in use.`);
    const hint = commandLineHint(error) ?? '';
    expect(hint).toContain(url);
    expect(hint).toContain('--url');
    expect(hint).toContain('MISSION_DATA_ACCESS_URL');
    expect(hint).toContain('mission-data config set url');
  });

  it('a connection reset by the server is retried', async () => {
    let calls = 0;
    const { url } = await serve((req, res) => {
      calls += 1;
      if (calls <= 2) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: 200, body: [MAG_RECORD] }));
    });
    expect(await newClient(url).query({ instrument: 'mag' })).toEqual([MAG_RECORD]);
    expect(calls).toBe(3);
  });

  it('a server that never answers times out with the time allowed', async () => {
    let calls = 0;
    const { url } = await serve(() => {
      calls += 1;
    });
    const client = newClient(url, { timeoutMs: 150, retries: 1 });
    const error = await client
      .resolveDownload(MAG_RECORD.file_path)
      .catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({ code: 'E_TIMEOUT' });
    expect((error as Error).message).toBe(
      `GET ${url}/download/${MAG_RECORD.file_path}: no answer from the service within 0.2 s. (gave up after 2 attempts)`,
    );
    expect(calls).toBe(2);
  });

  it('keeps connections alive between requests', async () => {
    const { url, sockets } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([MAG_RECORD]));
    });
    const client = newClient(url);
    for (let i = 0; i < 10; i += 1) await client.query({ instrument: 'mag' });
    // undici's pool may open a second connection while the first is being released; never one per request.
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it('streams a PUT with its Content-Length (never chunked) and no API key', async () => {
    const received: { headers: IncomingMessage['headers']; bytes: number }[] = [];
    const { url } = await serve((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, bytes });
        res.writeHead(200, { etag: '"x"' });
        res.end();
      });
    });
    const size = 3 * 1024 * 1024 + 17;
    const client = newClient(url, { apiKey: 'secret-key' });
    const result = await client.putObject(`${url}/objects/a?sig=1`, bytesUpload(Buffer.alloc(size, 1)));
    expect(result.etag).toBe('"x"');
    expect(received).toHaveLength(1);
    expect(received[0]?.bytes).toBe(size);
    expect(received[0]?.headers['content-length']).toBe(String(size));
    expect(received[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(received[0]?.headers['x-api-key']).toBeUndefined();
  });
});
