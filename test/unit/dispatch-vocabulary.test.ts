/**
 * Whichever client carries a request (the wire client, or undici on an injected dispatcher), its failures reach
 * the caller as the same errors: the same code, the same message, the same verdict of the failure policy.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/core/dispatch-faults.js';
import { errorCode, isRetryable } from '../../src/core/failure-policy.js';
import { bodyEndedEarly } from '../../src/download/part/pump.js';
import { HttpClient } from '../../src/service/client.js';
import { DISPATCH_PATHS } from '../helpers/dispatch-paths.js';

const TIMEOUT_MS = 300;
/** The body of `/whole`: more than one socket read's worth, so the rest waits while the taker is behind. */
const WHOLE_BYTES = 4 * 1024 * 1024;

let server: Server;
let base: string;
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const route = new URL(request.url ?? '/', 'http://x').pathname;
    if (route === '/silent') {
      held.push(response); // no head, ever
    } else if (route === '/stall') {
      response.writeHead(200, { 'content-length': '1000' });
      response.write(Buffer.alloc(10)); // then nothing
      held.push(response);
    } else if (route === '/cut') {
      response.writeHead(200, { 'content-length': '1000' });
      response.write(Buffer.alloc(10), () => response.socket?.destroy());
    } else if (route === '/cut-head') {
      request.socket.end('HTTP/1.1 200 OK\r\ncontent-le');
    } else if (route === '/whole') {
      // The first bytes, then the rest once the client has had time to fall behind.
      response.writeHead(200, { 'content-length': String(WHOLE_BYTES) });
      response.write('x'.repeat(1000));
      setTimeout(() => response.end('x'.repeat(WHOLE_BYTES - 1000)), 50);
    } else {
      response.end('ok');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of held) response.destroy();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

/** What a failure looks like to the caller: class, code, message, the cause's code, and whether it is retried. */
interface Seen {
  name: string;
  code: unknown;
  message: string;
  cause: string | undefined;
  retried: boolean;
}

/** The failure of a GET of `route` over `path`, or of reading its body whole. */
async function failureOver(path: (typeof DISPATCH_PATHS)[number], route: string): Promise<Seen> {
  const client = new HttpClient({ url: base, timeoutMs: TIMEOUT_MS, retries: 0, dispatcher: path.open() });
  try {
    const answer = await client.getObject(`${base}${route}?signature=s`);
    let position = 0;
    const error = await answer.body.consume((chunk) => {
      position += chunk.length;
    });
    // A body's early end as the download engine tells it.
    throw error
      ? bodyEndedEarly(`${base}${route}`, { position, error }, 1000)
      : new Error('the body ended whole');
  } catch (error) {
    const failure = error as Error & { code?: unknown };
    return {
      name: failure.name,
      code: failure.code,
      message: failure.message,
      cause: errorCode(failure.cause ?? failure),
      retried: isRetryable(failure),
    };
  } finally {
    await client.close();
    await path.close();
  }
}

describe('one vocabulary over both dispatch paths', () => {
  const cases: Array<[string, string, string]> = [
    ['no answer within the timeout', '/silent', FAULTS.answerTimeout],
    ['a body that stalls', '/stall', FAULTS.bodyTimeout],
    ['a body cut by the server', '/cut', FAULTS.closed],
    ['a head cut by the server', '/cut-head', FAULTS.closed],
  ];

  it.each(cases)('%s', async (_what, route, code) => {
    const [wire, undici] = [
      await failureOver(DISPATCH_PATHS[0] as (typeof DISPATCH_PATHS)[number], route),
      await failureOver(DISPATCH_PATHS[1] as (typeof DISPATCH_PATHS)[number], route),
    ];
    expect(wire.cause).toBe(code);
    expect(undici).toEqual(wire);
  });
});

describe('backpressure over both dispatch paths', () => {
  it.each(DISPATCH_PATHS.map((path) => [path.name, path] as const))(
    'over %s, a taker behind for twice the timeout gets the whole body, with no stall',
    async (_name, path) => {
      const client = new HttpClient({
        url: base,
        timeoutMs: TIMEOUT_MS,
        retries: 0,
        dispatcher: path.open(),
      });
      try {
        const answer = await client.getObject(`${base}/whole?signature=s`);
        let taken = '';
        let paused = false;
        let behind = false;
        let cameWhileBehind = 0;
        const error = await answer.body.consume((chunk) => {
          if (behind) cameWhileBehind += chunk.length;
          taken += chunk.toString();
          if (paused) return undefined;
          paused = true;
          behind = true;
          return new Promise<void>((done) =>
            setTimeout(() => {
              behind = false;
              done();
            }, 2 * TIMEOUT_MS),
          );
        });
        expect(error).toBeUndefined();
        expect(taken).toBe('x'.repeat(WHOLE_BYTES));
        // Nothing is handed over while the taker is behind.
        expect(cameWhileBehind).toBe(0);
      } finally {
        await client.close();
        await path.close();
      }
    },
  );
});
