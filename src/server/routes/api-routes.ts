/**
 * The service's API routes: `/upload/{filepath}`, `/download/{filepath}` and `/query`, answered in the envelope;
 * in today's service also under `/api-key/` (an `X-api-key` on every route) and `/authorized/` (a bearer token).
 */
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '../../core/errors.js';
import { parseName } from '../../naming/names.js';
import { unsafePathReason } from '../../naming/path-safety.js';
import type { CredentialCheck, Dialect, RequestTarget, ServerContext } from '../context.js';
import type { Reservation } from '../metadata/metadata-index.js';
import { OBJECT_PREFIX } from '../objects/presign.js';
import { MAX_WAITING_UPLOADS } from '../turns.js';
import { type ApiResponse, messageResponse, QUERY_HEADERS, RawJson } from '../wire.js';
import { reserveUpload } from './direct-upload.js';
import { parseQueryParameters } from './query-parameters.js';

/** The real service's answer to `/download` without a path. */
export const DOWNLOAD_NO_FILE_MESSAGE =
  'No file requested for download. Please provide a filename in the path. Eg. /download/path/to/file/filename.pkts';

/** The real service's answer to `/download` of a file it does not have. */
export const DOWNLOAD_NOT_FOUND_MESSAGE =
  'File not found, make sure you include the full path to the file in the request, e.g. /download/path/to/file/filename.pkts.';

/** The answer to `/upload` without a path. */
export const UPLOAD_NO_FILE_MESSAGE =
  'No file given to upload. Please provide the file path, e.g. /upload/imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';

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

const ROUTES = ['upload', 'download', 'query'] as const;

/** An API route's name. */
export type ApiRouteName = (typeof ROUTES)[number];

/** How a route is reached: at the specification's path, under `/api-key/` or under `/authorized/`. */
export type RouteAccess = 'plain' | 'api-key' | 'authorized';

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
  if (access !== 'plain' && dialect === 'spec') return false;
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
    else if (route !== 'query' && rest.startsWith(`/${route}/`)) after = rest.slice(route.length + 2);
    if (after !== undefined)
      return serves(dialect, route, access) ? { route, access, rest: after } : undefined;
  }
  return undefined;
}

const ROUTE_LISTS: Record<Dialect, string> = {
  spec: 'Routes are GET /upload/{filepath}, GET /download/{filepath} and GET /query.',
  both: 'Routes are GET /upload/{filepath}, GET or HEAD /download/{filepath} and GET /query, each also under /api-key/ and /authorized/.',
  today:
    'Routes are GET /api-key/upload/{filepath}, GET or HEAD /download/{filepath} and GET /query; the last two also under /api-key/ and /authorized/.',
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
  if (route.route === 'upload') return upload(context, req, route.rest, route.access);
  // Reads go first: while one is answered, uploads wait their turn (see turns.ts).
  if (route.route === 'download')
    return context.uploadTurns.reading(() => download(context, req, route.rest));
  return context.uploadTurns.reading(() => query(context, target));
}

function unsafePathResponse(rest: string): ApiResponse | undefined {
  const reason = unsafePathReason(rest);
  return reason ? messageResponse(400, `Invalid path ${JSON.stringify(rest)}: ${reason}.`) : undefined;
}

/**
 * The 409 of today's routes: an object with an error name and a message (the specification's plain routes
 * answer a string).
 */
export function fileExistsResponse(key: string): ApiResponse {
  return {
    statusCode: 409,
    headers: { 'Content-Type': 'application/json' },
    body: {
      error: 'FileAlreadyExists',
      message: `The file '${key}' already exists. Stored files are never replaced: upload a changed file under a new version.`,
    },
  };
}

/** The words every answer about a reserved name carries, so a client tells it from a stored file. */
export const NOT_STORED_YET = 'not stored yet';

/**
 * The 409 of a name reserved by an upload whose bytes have not been confirmed: the name is taken, but no file is
 * stored; it is free again at the reservation's release time if the bytes never arrive. `Retry-After` says when.
 * (An upload of the same bytes, with the same Content-MD5, takes the reservation back instead.)
 */
export function nameReservedResponse(held: Reservation, access: RouteAccess = 'plain'): ApiResponse {
  const started = new Date(held.reservedAtMs).toISOString();
  const free = new Date(held.releaseAtMs).toISOString();
  const message = `${held.key} is reserved: an upload of this name started at ${started} and is ${NOT_STORED_YET}; the name is free again at ${free} if its bytes never arrive. Try again after that, or send the same bytes (the same Content-MD5) to take the upload back.`;
  const retryAfter = {
    'Retry-After': String(Math.max(1, Math.ceil((held.releaseAtMs - Date.now()) / 1000))),
  };
  if (access === 'plain') return messageResponse(409, message, retryAfter);
  return {
    statusCode: 409,
    headers: { 'Content-Type': 'application/json', ...retryAfter },
    body: { error: 'UploadInProgress', message },
  };
}

/**
 * `GET /upload/{filepath}` (credentials already checked): checks the name, then hands out a pre-signed PUT
 * URL. `access` decides the form of a 409.
 */
export async function upload(
  context: ServerContext,
  req: IncomingMessage,
  rest: string,
  access: RouteAccess = 'plain',
): Promise<ApiResponse> {
  if (rest === '') return messageResponse(400, UPLOAD_NO_FILE_MESSAGE);
  const unsafe = unsafePathResponse(rest);
  if (unsafe) return unsafe;
  // Only the name counts: the key is rebuilt from it, whatever folders the client put in front.
  const name = rest.slice(rest.lastIndexOf('/') + 1);
  let key: string;
  try {
    key = parseName(name).path;
  } catch (error) {
    if (error instanceof ValidationError) return messageResponse(400, error.problems.join('\n'));
    throw error;
  }
  const baseUrl = context.baseUrl(req);
  const exists = (): ApiResponse => {
    if (access !== 'plain') return fileExistsResponse(key);
    const where = context.uploads ? `${context.store.location}/` : `${baseUrl}${OBJECT_PREFIX}`;
    return messageResponse(409, `${where}${key} already exists.`);
  };
  const turn = await context.uploadTurns.take(async (): Promise<ApiResponse> => {
    if (context.uploads) {
      return reserveUpload(context, req, key, exists, (held) => nameReservedResponse(held, access));
    }
    if ((await context.index.has(key)) || (await context.store.occupied(key))) return exists();
    return {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json' },
      body: await context.store.presign('PUT', key, {
        baseUrl,
        lifetimeSeconds: context.faults.options.urlLifeSeconds,
      }),
    };
  });
  return turn === 'full' ? uploadsBusyResponse() : turn.value;
}

/** `GET /download/{filepath}` (and HEAD, whose answer the wire sends without its body): redirects to a pre-signed GET URL of a stored object. */
export async function download(
  context: ServerContext,
  req: IncomingMessage,
  rest: string,
): Promise<ApiResponse> {
  if (rest === '') return messageResponse(400, DOWNLOAD_NO_FILE_MESSAGE);
  const unsafe = unsafePathResponse(rest);
  if (unsafe) return unsafe;
  const asked = Date.now();
  const state = await context.index.state(rest);
  let found = state === 'stored';
  // An upload of this name that just reached the store is confirmed first, so the file is found at once.
  if (
    state !== undefined &&
    state !== 'stored' &&
    (await context.uploads?.awaitReservations([state], asked))
  ) {
    found = await context.index.has(rest);
  }
  if (!found) return messageResponse(404, DOWNLOAD_NOT_FOUND_MESSAGE);
  const url = await context.store.presign('GET', rest, {
    baseUrl: context.baseUrl(req),
    lifetimeSeconds: context.faults.options.urlLifeSeconds,
  });
  return {
    statusCode: 302,
    headers: { 'Content-Type': 'text/html', Location: url },
    body: { download_url: url },
  };
}

/** Seconds a client refused for a full queue of uploads is asked to wait. */
const UPLOADS_BUSY_RETRY_AFTER_SECONDS = 2;

/** The answer to an `/upload` past the queue of those waiting their turn: 503, try again shortly. */
function uploadsBusyResponse(): ApiResponse {
  return messageResponse(
    503,
    `The server has ${MAX_WAITING_UPLOADS} uploads waiting their turn; try again in ${UPLOADS_BUSY_RETRY_AFTER_SECONDS} seconds.`,
    { 'Retry-After': String(UPLOADS_BUSY_RETRY_AFTER_SECONDS) },
  );
}

/** `GET /query`: the records of stored files matching every filter, ordered by path, one page if asked. */
export async function query(context: ServerContext, target: RequestTarget): Promise<ApiResponse> {
  const parsed = parseQueryParameters(target.query, context.dialect);
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
