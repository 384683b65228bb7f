/**
 * An HTTP proxy in front of the reference server that can freeze its object store: once frozen, object answers
 * under way stop carrying bytes and new object requests are taken but never answered (a store whose process was
 * stopped), while the API routes still answer. It can also answer the next API requests with a status of its
 * own (a service that fails for a while). For tests of how long a run takes to give up, and what it says.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running freezing proxy. */
export interface FreezingProxy {
  url: string;
  /** True once the object store froze. */
  readonly frozen: boolean;
  /** Object requests seen (each GET or PUT of an object URL). */
  readonly objectRequests: number;
  /** API requests answered by the proxy itself with `failApi`'s status. */
  readonly apiFailures: number;
  close(): Promise<void>;
}

const API_ROUTE = /^\/(upload|download|query)(\/|\?|$)/;

/**
 * Starts the proxy in front of `target`. `freezeAfter`: object body bytes forwarded before the store freezes
 * (never when undefined). `failApi`: the first `count` requests to `path`-prefixed API routes are answered with
 * `status` without reaching the server.
 */
export async function startFreezingProxy(
  target: string,
  options: { freezeAfter?: number; failApi?: { prefix: string; count: number; status: number } },
): Promise<FreezingProxy> {
  const upstream = new URL(target);
  const state = { frozen: false, objectRequests: 0, apiFailures: 0, forwarded: 0 };
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const isApi = API_ROUTE.test(path);
    if (isApi && options.failApi && path.startsWith(options.failApi.prefix)) {
      if (state.apiFailures < options.failApi.count) {
        state.apiFailures += 1;
        res.writeHead(options.failApi.status, { 'content-type': 'text/plain' });
        res.end('Internal Server Error');
        return;
      }
    }
    if (!isApi) {
      state.objectRequests += 1;
      if (state.frozen) {
        held.push(res); // taken, never answered
        req.resume();
        return;
      }
    }
    const forward = request(
      { host: upstream.hostname, port: upstream.port, path, method: req.method, headers: req.headers },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (isApi || options.freezeAfter === undefined) {
          answer.pipe(res);
          return;
        }
        answer.on('data', (chunk: Buffer) => {
          if (state.frozen) return; // the bytes stop here; the connection stays open
          const room = (options.freezeAfter as number) - state.forwarded;
          if (chunk.length < room) {
            state.forwarded += chunk.length;
            res.write(chunk);
            return;
          }
          res.write(chunk.subarray(0, Math.max(0, room)));
          state.forwarded += Math.max(0, room);
          state.frozen = true;
          held.push(res);
        });
        answer.on('end', () => {
          if (!state.frozen) res.end();
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get frozen() {
      return state.frozen;
    },
    get objectRequests() {
      return state.objectRequests;
    },
    get apiFailures() {
      return state.apiFailures;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
