/**
 * Answers one request: `/health`, the object routes or the API routes, each reported to the request log once
 * its response is done; a failure is answered 503 when the store or index does not answer (the breaker's
 * outage, or a probe's finding), 500 otherwise.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { BackendUnavailable, durationWords, type Outage } from './breaker.js';
import { requestTarget, type ServerContext } from './context.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from './health.js';
import { apiResponse } from './routes/api-routes.js';
import type { ObjectOutcome } from './routes/object-put-route.js';
import { handleObject, isObjectPath } from './routes/object-routes.js';
import { messageResponse, sendApiResponse } from './wire.js';

/** One request, as reported to `log` once its response is done (or the client went away). */
export interface RequestLogEntry {
  method: string;
  /** The request path; object routes drop their query string, which holds the URL's credentials. */
  path: string;
  status: number;
  durationMs: number;
  /** True when the connection closed before the response was complete. */
  aborted: boolean;
  /** Body bytes of an object GET handed to the connection (all of them unless `aborted`). */
  bytes?: number;
  /** The error behind a 500 answer, or behind a 507 or 500 to an upload the store could not take. */
  error?: unknown;
}

/** A handler of requests: it answers every one itself, and never rejects. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** The handler of every request the server receives, reporting each to `log`. */
export function requestHandler(
  context: ServerContext,
  log: ((entry: RequestLogEntry) => void) | undefined,
): RequestHandler {
  return async (req, res) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const target = requestTarget(req.url ?? '/');
    const objectRoute = isObjectPath(target.path);
    let failure: unknown;
    const outcome: ObjectOutcome = {};
    res.on('close', () => {
      // A store failure the object route answered itself still counts as an error of the request.
      const answered = outcome.answered;
      const error = failure ?? answered?.error;
      log?.({
        method,
        path: objectRoute || target.rawQuery === '' ? target.path : `${target.path}?${target.rawQuery}`,
        status: res.statusCode,
        durationMs: performance.now() - started,
        aborted: !res.writableFinished && !answered?.written,
        ...(outcome.sent === undefined ? {} : { bytes: outcome.sent }),
        ...(error === undefined ? {} : { error }),
      });
    });
    try {
      if (target.path === '/health' && (method === 'GET' || method === 'HEAD')) {
        await answerHealth(context, res, method === 'HEAD');
        return;
      }
      if (objectRoute) {
        await handleObject(context, req, res, target, outcome);
        return;
      }
      sendApiResponse(res, await apiResponse(context, req, target), context.wire, method === 'HEAD');
    } catch (error) {
      failure = error;
      await answerFailure(context, res, objectRoute, error);
    }
  };
}

/**
 * `/health`: 200 when the store and the index answer, 503 naming the part that does not. While the breaker is
 * open its latest probe is the answer, at once; otherwise a probe (joining one under way) decides.
 */
async function answerHealth(context: ServerContext, res: ServerResponse, head: boolean): Promise<void> {
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
  const message = down ? unavailableMessage(down) : 'Internal server error; the server log has the details.';
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
