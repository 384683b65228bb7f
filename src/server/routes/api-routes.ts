/**
 * The service's API routes: `/upload/{filepath}`, `/download/{filepath}` and `/query`, answered in the envelope;
 * in today's service also `/spice-query`, and every route also under `/api-key/` (an `X-api-key` on every route)
 * and `/authorized/` (a bearer token).
 */
import type { IncomingMessage } from 'node:http';
import type { CredentialCheck, Dialect, RequestTarget, RouteAccess, ServerContext } from '../context.js';
import { type ApiResponse, messageResponse, QUERY_HEADERS, RawJson } from '../wire.js';
import { download, upload } from './file-routes.js';
import { type ParsedQuery, parseQueryParameters, parseSpiceQueryParameters } from './query-parameters.js';

/** The answer to an upload without `X-api-key` when the server needs one. */
export const MISSING_API_KEY_MESSAGE = 'Missing X-api-key header: this server needs an API key for uploads.';

/** The answer to an `/api-key/` route other than upload without `X-api-key` when the server needs one. */
export const MISSING_API_KEY_ROUTE_MESSAGE =
  'Missing X-api-key header: this server needs an API key on /api-key/ routes.';

/** The answer to an upload or `/api-key/` route whose `X-api-key` is not accepted. */
export const WRONG_API_KEY_MESSAGE = 'Forbidden: the X-api-key given is not valid for this server.';

/** The answer to an `/authorized/` route without a bearer token. */
export const MISSING_TOKEN_MESSAGE =
  'Missing bearer token: /authorized/ routes need an Authorization: Bearer <token> header.';

/** The answer to an `/authorized/` route whose bearer token is not accepted. */
export const WRONG_TOKEN_MESSAGE = 'Forbidden: the bearer token given is not valid for this server.';

/** The answer to an `/authorized/` route of a server that has no tokens at all. */
export const NO_TOKENS_MESSAGE =
  'Forbidden: this server accepts no bearer tokens; start it with tokens (serve --token) to use /authorized/ routes.';

const ROUTES = ['upload', 'download', 'query', 'spice-query'] as const;

/** An API route's name. */
export type ApiRouteName = (typeof ROUTES)[number];

/** The routes that take no path after their name. */
const SEARCH_ROUTES: readonly ApiRouteName[] = ['query', 'spice-query'];

/** A path resolved to a route. */
export interface ApiRoute {
  route: ApiRouteName;
  access: RouteAccess;
  /** The rest of the path after `/<route>/`, still percent-encoded. */
  rest: string;
}

const PREFIXES = [
  ['api-key', '/api-key'],
  ['authorized', '/authorized'],
] as const;

/** True when the dialect has the route at that access. */
function serves(dialect: Dialect, route: ApiRouteName, access: RouteAccess): boolean {
  if ((access !== 'plain' || route === 'spice-query') && dialect === 'spec') return false;
  // Today's production gateway takes uploads only under /api-key/: the plain and /authorized/ uploads of its
  // development stage are not deployed there.
  if (route === 'upload' && dialect === 'today') return access === 'api-key';
  return true;
}

/** The API route a path belongs to in a dialect; undefined for other paths. */
export function apiRouteOf(path: string, dialect: Dialect = 'both'): ApiRoute | undefined {
  let access: RouteAccess = 'plain';
  let rest = path;
  for (const [name, prefix] of PREFIXES) {
    if (path.startsWith(`${prefix}/`)) {
      access = name;
      rest = path.slice(prefix.length);
      break;
    }
  }
  for (const route of ROUTES) {
    let after: string | undefined;
    if (rest === `/${route}`) after = '';
    else if (!SEARCH_ROUTES.includes(route) && rest.startsWith(`/${route}/`))
      after = rest.slice(route.length + 2);
    if (after !== undefined)
      return serves(dialect, route, access) ? { route, access, rest: after } : undefined;
  }
  return undefined;
}

const ROUTE_LISTS: Record<Dialect, string> = {
  spec: 'Routes are GET /upload/{filepath}, GET /download/{filepath} and GET /query.',
  both: 'Routes are GET /upload/{filepath}, GET or HEAD /download/{filepath}, GET /query and GET /spice-query, each also under /api-key/ and /authorized/.',
  today:
    'Routes are GET /api-key/upload/{filepath}, GET or HEAD /download/{filepath}, GET /query and GET /spice-query; the last three also under /api-key/ and /authorized/.',
};

/** The answer to a path that is no route of the dialect. */
export function notFoundResponse(path: string, dialect: Dialect = 'both'): ApiResponse {
  return messageResponse(404, `Not found: there is no route ${path}. ${ROUTE_LISTS[dialect]}`);
}

/**
 * The methods a route answers. Today's gateway also sends HEAD of a download to its Lambda, so a web page can
 * learn a file's URL without following the redirect; the specification has GET only.
 */
function allowedMethods(route: ApiRouteName, dialect: Dialect): readonly string[] {
  return route === 'download' && dialect !== 'spec' ? ['GET', 'HEAD'] : ['GET'];
}

/** The answer to a route called with the wrong method. */
export function methodNotAllowedResponse(
  method: string,
  path: string,
  allowed: readonly string[] = ['GET'],
): ApiResponse {
  return messageResponse(405, `Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}.`, {
    Allow: allowed.join(', '),
  });
}

function firstHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function apiKeyRefusal(
  check: CredentialCheck,
  req: IncomingMessage,
  route: ApiRoute,
): ApiResponse | undefined {
  const problem = check(firstHeader(req, 'x-api-key'));
  if (problem === 'missing') {
    return messageResponse(
      401,
      route.route === 'upload' ? MISSING_API_KEY_MESSAGE : MISSING_API_KEY_ROUTE_MESSAGE,
    );
  }
  if (problem === 'wrong') return messageResponse(403, WRONG_API_KEY_MESSAGE);
  return undefined;
}

/** `Authorization: Bearer <token>`, the scheme in any case (RFC 9110); anything else counts as no token. */
const BEARER = /^Bearer +([^ ]+) *$/i;

function tokenRefusal(check: CredentialCheck | undefined, req: IncomingMessage): ApiResponse | undefined {
  const token = BEARER.exec(firstHeader(req, 'authorization') ?? '')?.[1];
  const problem = check ? check(token) : token === undefined ? 'missing' : 'unconfigured';
  if (problem === 'missing')
    return messageResponse(401, MISSING_TOKEN_MESSAGE, { 'WWW-Authenticate': 'Bearer' });
  if (problem === 'wrong') return messageResponse(403, WRONG_TOKEN_MESSAGE);
  if (problem === 'unconfigured') return messageResponse(403, NO_TOKENS_MESSAGE);
  return undefined;
}

/**
 * The refusal of a request without the credentials its route needs: a bearer token under `/authorized/`
 * (always: a server without tokens refuses every one), the API key under `/api-key/` and on the plain upload
 * (when the server has keys). Plain downloads and queries are public, as in the specification.
 */
function credentialRefusal(
  context: ServerContext,
  req: IncomingMessage,
  route: ApiRoute,
): ApiResponse | undefined {
  if (route.access === 'authorized') return tokenRefusal(context.checkToken, req);
  if (context.checkApiKey && (route.access === 'api-key' || route.route === 'upload')) {
    return apiKeyRefusal(context.checkApiKey, req, route);
  }
  return undefined;
}

/** Answers a request to any path but the object routes: the route of the server's dialect, or why not. */
export async function apiResponse(
  context: ServerContext,
  req: IncomingMessage,
  target: RequestTarget,
): Promise<ApiResponse> {
  const method = req.method ?? 'GET';
  const route = apiRouteOf(target.path, context.dialect);
  if (!route) return notFoundResponse(target.path, context.dialect);
  const allowed = allowedMethods(route.route, context.dialect);
  if (!allowed.includes(method)) return methodNotAllowedResponse(method, target.path, allowed);
  const refusal = credentialRefusal(context, req, route);
  if (refusal) return refusal;
  // While the store or the index does not answer, the breaker answers for them (503, at once).
  return context.breaker.guard(() => {
    if (route.route === 'upload') return upload(context, req, route.rest, route.access);
    // Reads go first: while one is answered, uploads wait their turn (see turns.ts).
    if (route.route === 'download')
      return context.uploadTurns.reading(() => download(context, req, route.rest));
    if (route.route === 'spice-query') {
      return context.uploadTurns.reading(() => answerQuery(context, parseSpiceQueryParameters(target.query)));
    }
    return context.uploadTurns.reading(() => query(context, target));
  });
}

/** `GET /query`: the records of stored files matching every filter, ordered by path, one page if asked. */
export async function query(context: ServerContext, target: RequestTarget): Promise<ApiResponse> {
  return answerQuery(context, parseQueryParameters(target.query, context.dialect));
}

/**
 * The answer to a checked query (`/query`, or `/spice-query` over the kernels): the records of stored files
 * matching every filter, ordered by path, one page if asked; 400 with the problem of one that is not valid.
 */
async function answerQuery(context: ServerContext, parsed: ParsedQuery): Promise<ApiResponse> {
  if ('problem' in parsed) return { statusCode: 400, headers: { ...QUERY_HEADERS }, body: parsed.problem };
  const { filters, page } = parsed;
  const asked = Date.now();
  let chunks: Buffer[];
  if (!context.uploads) chunks = await context.index.queryChunks(filters, page);
  else {
    // One look gives the records and the pending uploads this query could select. Those are confirmed first
    // (others are left to the loop), so a file whose upload completed is found at once; never more than a
    // bounded wait. When none had arrived, the first look's answer stands.
    const first = await context.index.queryWithPending(filters, page);
    const changed = await context.uploads.awaitReservations(first.pending, asked);
    chunks = changed ? await context.index.queryChunks(filters, page) : first.chunks;
  }
  return { statusCode: 200, headers: { ...QUERY_HEADERS }, body: new RawJson(chunks) };
}
