/**
 * A small load balancer for tests: requests go round-robin to a list of backends, and one a backend answers 503
 * or cannot take (connection refused, reset before an answer) is sent again to the next, as HAProxy's `retry-on
 * 503 conn-failure` or an ALB's target health would do. Bodies are buffered (the API's requests are small), so
 * a request is safe to send again. Every attempt is recorded, and every answer passed back.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One try of one request at one backend. */
export interface ProxyAttempt {
  backend: string;
  path: string;
  /** The backend's status, or the error code when it gave none. */
  outcome: number | string;
}

/** A running proxy. */
export interface RetryingProxy {
  url: string;
  attempts: ProxyAttempt[];
  /** Statuses (or `error`) passed back to clients. */
  answered: Array<number | 'error'>;
  close(): Promise<void>;
}

/** How many backends a request may be tried at, in all, before the proxy gives up (502). */
const MAX_TRIES = 8;

/** Starts the proxy on 127.0.0.1 (a free port) in front of `backends` (base URLs). */
export async function startRetryingProxy(backends: readonly string[]): Promise<RetryingProxy> {
  const attempts: ProxyAttempt[] = [];
  const answered: Array<number | 'error'> = [];
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      // Each try goes to the backend after the one before it, as a balancer's redispatch does: with one shared
      // turn, the tries of one request could meet the same backend, gone, eight times while others took turns.
      const first = next++;
      const tryAt = (tries: number): void => {
        const backend = backends[(first + tries) % backends.length] as string;
        const target = new URL(req.url ?? '/', backend);
        const headers: IncomingHttpHeaders = { ...req.headers, 'content-length': String(body.length) };
        delete headers.connection;
        const upstream = httpRequest(target, { method: req.method, headers, agent: false }, (answer) => {
          const status = answer.statusCode ?? 502;
          attempts.push({ backend, path: target.pathname, outcome: status });
          if (status === 503 && tries + 1 < MAX_TRIES) {
            answer.resume();
            setTimeout(() => tryAt(tries + 1), 20).unref();
            return;
          }
          const { connection: _connection, ...passed } = answer.headers;
          res.writeHead(status, passed);
          answer.pipe(res);
          answer.on('end', () => answered.push(status));
          answer.on('error', () => {
            answered.push('error');
            res.destroy();
          });
        });
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          attempts.push({ backend, path: target.pathname, outcome: error.code ?? 'error' });
          if (res.headersSent) {
            answered.push('error');
            res.destroy();
          } else if (tries + 1 < MAX_TRIES) {
            // A backend that cannot take the request now (leaving, or a moment's overload): the next, after a
            // wait that grows, as a balancer's retries with redispatch do (at most about 2.5 s in all).
            setTimeout(() => tryAt(tries + 1), Math.min(20 * 2 ** tries, 640)).unref();
          } else {
            answered.push(502);
            res.writeHead(502, { 'Content-Type': 'text/plain' });
            res.end('No backend answered.\n');
          }
        });
        upstream.end(body);
      };
      tryAt(0);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    answered,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
