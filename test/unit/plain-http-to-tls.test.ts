/** `http://` to a server that speaks TLS (issue 36): the reset or garbled answer it gets comes with a hint. */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/core/dispatch-faults.js';
import { NetworkError, type Peer } from '../../src/core/errors.js';
import { transportError } from '../../src/http/transport-failures.js';
import { HttpClient } from '../../src/service/client.js';

const timeoutMs = 10_000;
const failure = (url: string, code: string, peer: Peer = 'service') =>
  transportError({
    method: 'GET',
    url: new URL(url),
    error: Object.assign(new Error('other side closed'), { code }),
    peer,
    timeoutMs,
  }) as Error & { hint?: string };

describe('a plain http URL whose connection is reset or answered with no HTTP', () => {
  it('hints at https for the service', () => {
    for (const code of ['ECONNRESET', FAULTS.closed, 'HPE_INVALID_CONSTANT']) {
      expect(failure('http://archive.example:8443/query', code).hint).toBe(
        'If the server at archive.example:8443 speaks https, use an https:// URL.',
      );
    }
  });

  it('says nothing of it for an https URL, or for the store the service named', () => {
    expect(failure('https://archive.example/query', 'ECONNRESET').hint).toBeUndefined();
    expect(failure('http://store.example/objects/a', 'ECONNRESET', 'object store').hint).toBeUndefined();
  });
});

describe('a connection that breaks once an answer came', () => {
  it('gets no https hint: the server spoke HTTP', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('[{"file_path":', () => response.socket?.destroy());
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new HttpClient({ url, retries: 0 });
    try {
      const error = (await client
        .query({ instrument: 'mag' })
        .catch((caught: unknown) => caught)) as NetworkError;
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toContain('closed');
      expect(error.hint).toBeUndefined();
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});
