/**
 * Answers one request: `/health`, the object routes or the API routes, each reported to the request log once
 * its response is done, under an id it answers in `X-Request-Id`; while the server drains, new requests are
 * answered 503 at once and the others finish; a failure is answered 503 when the store or index does not answer (the breaker's
 * outage, or a probe's finding), 500 otherwise.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { BackendUnavailable, durationWords, type Outage } from './breaker.js';
import { requestTarget, type ServerContext } from './context.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from './health.js';
import { METRICS_CONTENT_TYPE, type ServerMetrics } from './metrics.js';
import { countBodyBytes } from './response-bytes.js';
import { apiResponse, apiRouteOf } from './routes/api-routes.js';
import type { ObjectOutcome } from './routes/object-put-route.js';
import { handleObject, isObjectPath } from './routes/object-routes.js';
import type { Requests } from './shutdown.js';
import { messageResponse, sendApiResponse } from './wire.js';

/**
 * The status a request whose connection closed before its answer ended is logged and counted with: nginx's
 * 499 "client closed request", which operators read as "no complete answer", never as a success.
 */
export const CLOSED_EARLY_STATUS = 499;

/** One request, as reported to `log` once its response is done (or the client went away). */
export interface RequestLogEntry {
  /** The request's id: the `X-Request-Id` a proxy set, else one made here; answered in `X-Request-Id`. */
  id: string;
  method: string;
  /** The route's template (`/query`, `/upload/{path}`, `/objects/{key}`), never a file path. */
  route: string;
  /** The address of the connection's other end (a proxy's, behind one). */
  peer: string | undefined;
  /** The request path; object routes drop their query string, which holds the URL's credentials. */
  path: string;
  /** The HTTP status answered; 499 when `aborted` (`sentStatus` then says what status had been sent). */
  status: number;
  durationMs: number;
  /** True when the connection closed before the response was complete. */
  aborted: boolean;
  /** The HTTP status already sent when the connection closed before the rest of the answer (`aborted` only). */
  sentStatus?: number;
  /** True when the server's stop (the drain's bound passed, or `close()`) cut the request off (`aborted` only). */
  cut?: boolean;
  /** Body bytes of the response handed to the connection, on every route (all of them unless `aborted`). */
  bytes: number;
  /** The error behind a 500 answer, or behind a 507 or 500 to an upload the store could not take. */
  error?: unknown;
}

/** A handler of requests: it answers every one itself, and never rejects. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** What the handler reports to and answers from, beside the routes' context. */
export interface HandlerOptions {
  /** Called once per request, when its response is done (or its connection closed). */
  log?: ((entry: RequestLogEntry) => void) | undefined;
  /** The server's metrics; undefined when it keeps none. */
  metrics?: ServerMetrics | undefined;
  /** `/metrics` on this handler's port (false when the metrics have a port of their own, or are off). */
  metricsHere?: boolean | undefined;
  /** A bearer token `/metrics` needs, when the operator gave one. */
  metricsToken?: string | undefined;
  /** The requests under way, and whether the server is draining. */
  requests: Requests;
}

/** An id a proxy may hand on: short, printable, no spaces (it goes into log lines and headers as it is). */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request's id: the proxy's `X-Request-Id` when it is one we can carry, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomBytes(8).toString('hex');
}

/** The template of the route a path belongs to, for logs and metrics: a few fixed values, never a file path. */
export function routeTemplate(path: string, method: string): string {
  if (path === '/health') return '/health';
  if (path === '/metrics') return '/metrics';
  if (isObjectPath(path)) return '/objects/{key}';
  const api = apiRouteOf(path);
  if (api === undefined) return method === 'OPTIONS' ? 'OPTIONS' : 'unmatched';
  const prefix = api.access === 'plain' ? '' : `/${api.access}`;
  const search = api.route === 'query' || api.route === 'spice-query';
  return `${prefix}/${api.route}${search ? '' : '/{path}'}`;
}

/** Seconds a client is asked to wait before it tries a draining server's request again (elsewhere, at once). */
export const DRAINING_RETRY_AFTER_SECONDS = 1;

/** The handler of every request the server receives, reporting each to the log and the metrics. */
export function requestHandler(context: ServerContext, options: HandlerOptions): RequestHandler {
  const { metrics, requests } = options;
  return async (req, res) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const target = requestTarget(req.url ?? '/');
    const objectRoute = isObjectPath(target.path);
    const id = requestIdOf(req);
    res.setHeader('X-Request-Id', id);
    const route = routeTemplate(target.path, method);
    let failure: unknown;
    const outcome: ObjectOutcome = {};
    const bodyBytes = countBodyBytes(res);
    metrics?.started();
    const closed = recordOnClose(req, res, options, {
      id,
      method,
      route,
      target,
      objectRoute,
      started,
      outcome,
      bodyBytes,
      failure: () => failure,
    });
    /** Runs a route; a failure is answered here, so the work never rejects. */
    const answer = async (work: () => Promise<void>): Promise<void> => {
      try {
        await work();
      } catch (error) {
        failure = error;
        await answerFailure(context, res, objectRoute, error);
      }
    };
    if (target.path === '/health' && (method === 'GET' || method === 'HEAD')) {
      await answer(() => answerHealth(context, res, method === 'HEAD', requests));
    } else if (target.path === '/metrics' && options.metricsHere && metrics) {
      await answer(() => answerMetrics(req, res, metrics, options.metricsToken));
    } else if (requests.draining) {
      await answer(async () => answerDraining(context, res, objectRoute));
    } else {
      const routed = async () => {
        if (objectRoute) return handleObject(context, req, res, target, outcome);
        sendApiResponse(res, await apiResponse(context, req, target), context.wire, method === 'HEAD');
      };
      // Counted until the response closes, so a drain waits for the last bytes of every answer it lets finish.
      await requests.run(() => answer(routed), closed);
    }
  };
}

/** What a request is told by a server that is stopping: 503, try again (elsewhere), and this connection ends. */
export const DRAINING_MESSAGE = 'Service unavailable: this server is stopping; try again.';

function answerDraining(context: ServerContext, res: ServerResponse, objectRoute: boolean): void {
  const headers = { 'Retry-After': String(DRAINING_RETRY_AFTER_SECONDS), Connection: 'close' };
  res.shouldKeepAlive = false;
  if (objectRoute) {
    res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
    res.end(`${DRAINING_MESSAGE}\n`);
  } else {
    sendApiResponse(res, messageResponse(503, DRAINING_MESSAGE, headers), context.wire);
  }
}

/** `/metrics`: the text format, behind the operator's bearer token when one was given. */
export async function answerMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: ServerMetrics,
  token: string | undefined,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('Use GET for /metrics.\n');
    return;
  }
  if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
    res.writeHead(401, { 'WWW-Authenticate': 'Bearer', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('/metrics needs the bearer token the server was started with (--metrics-token).\n');
    return;
  }
  const body = await metrics.text();
  res.writeHead(200, {
    'Content-Type': METRICS_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Compares a bearer token in constant time for equal lengths. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * `/health`: 200 when the store and the index answer, 503 naming the part that does not. While the breaker is
 * open its latest probe is the answer, at once; otherwise a probe (joining one under way) decides.
 */
async function answerHealth(
  context: ServerContext,
  res: ServerResponse,
  head: boolean,
  requests: Requests,
): Promise<void> {
  if (requests.draining) {
    const body = JSON.stringify({
      status: 'draining',
      reason: 'The server is stopping: send no new requests.',
    });
    res.writeHead(503, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      'Retry-After': String(DRAINING_RETRY_AFTER_SECONDS),
      Connection: 'close',
    });
    res.end(head ? undefined : body);
    return;
  }
  const report = context.breaker.outage?.report ?? (await context.breaker.probe());
  const body = JSON.stringify(report);
  res.writeHead(report.status === 'ok' ? 200 : 503, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(head ? undefined : body);
}

/**
 * Answers a request whose route threw: 503 with `Retry-After` when the store or the database does not answer
 * (not the server's fault), 500 otherwise; a response already under way is cut off instead.
 */
async function answerFailure(
  context: ServerContext,
  res: ServerResponse,
  objectRoute: boolean,
  error: unknown,
): Promise<void> {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  let down: Outage | undefined;
  if (error instanceof BackendUnavailable) down = error.outage;
  else {
    await context.breaker.probe();
    down = context.breaker.outage;
  }
  const status = down ? 503 : 500;
  const id = String(res.getHeader('x-request-id') ?? '');
  const message = down
    ? unavailableMessage(down)
    : `Internal server error; the server log has the details (request id ${id}).`;
  const headers: Record<string, string> = down
    ? { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }
    : {};
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  if (objectRoute) {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
    res.end(`${message}\n`);
  } else {
    sendApiResponse(res, messageResponse(status, message, headers), context.wire);
  }
}

/** What a client is told while a backend does not answer: which one, for how long, and when to try again. */
export function unavailableMessage(outage: Outage, nowMs = Date.now()): string {
  return (
    `Service unavailable: ${outage.problem} Failing for ${durationWords(nowMs - outage.sinceMs)}; ` +
    `try again in ${UNAVAILABLE_RETRY_AFTER_SECONDS} s.`
  );
}

/** One request as its log line and metrics tell it once its response closes. */
interface RequestFacts {
  id: string;
  method: string;
  route: string;
  target: ReturnType<typeof requestTarget>;
  objectRoute: boolean;
  started: number;
  outcome: ObjectOutcome;
  bodyBytes: () => number;
  /** The failure a route met, if any (known only once it ran). */
  failure: () => unknown;
}

/**
 * Tells the log and the metrics of a request once its response closes (its last bytes gone, or the connection
 * lost): an answer that did not end is 499, with the status it had sent, and `cut` when the server's stop cut it.
 */
function recordOnClose(
  req: IncomingMessage,
  res: ServerResponse,
  options: HandlerOptions,
  facts: RequestFacts,
): Promise<void> {
  const { log, metrics, requests } = options;
  const { id, method, route, target, outcome } = facts;
  return new Promise<void>((resolvePromise) => {
    res.once('close', () => {
      // A store failure the object route answered itself still counts as an error of the request.
      const answered = outcome.answered;
      const error = facts.failure() ?? answered?.error;
      const aborted = !res.writableFinished && !answered?.written;
      const cut = aborted && requests.stopping;
      const status = aborted ? CLOSED_EARLY_STATUS : res.statusCode;
      const durationMs = performance.now() - facts.started;
      metrics?.ended({
        route,
        method,
        status,
        durationMs,
        objectBytes: outcome.sent,
        ...(aborted ? { aborted: cut ? 'stop' : 'client' } : {}),
      });
      log?.({
        id,
        method,
        route,
        peer: req.socket.remoteAddress,
        path: facts.objectRoute || target.rawQuery === '' ? target.path : `${target.path}?${target.rawQuery}`,
        status,
        durationMs,
        aborted,
        ...(aborted && res.headersSent ? { sentStatus: res.statusCode } : {}),
        ...(cut ? { cut } : {}),
        bytes: method === 'HEAD' ? 0 : facts.bodyBytes(),
        ...(error === undefined ? {} : { error }),
      });
      resolvePromise();
    });
  });
}
