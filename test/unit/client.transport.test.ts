/**
 * The client loads two of undici's own modules rather than its whole index; when an undici release moves them,
 * it must still work through the index.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpClient } from '../../src/service/client.js';
import { MAG_RECORD } from '../helpers/records.js';

vi.mock('undici/lib/dispatcher/agent.js', () => {
  throw new Error('Cannot find module undici/lib/dispatcher/agent.js');
});

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
});

describe('the client when undici moves its modules', () => {
  it('queries through the whole of undici instead', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: 200, body: [MAG_RECORD] }));
    });
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    const client = new HttpClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    try {
      expect(await client.query({ instrument: 'mag' })).toEqual([MAG_RECORD]);
    } finally {
      await client.close();
    }
  });
});
