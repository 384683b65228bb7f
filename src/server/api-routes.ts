/** The service's API routes: `/upload/{filepath}`, `/download/{filepath}` and `/query`, answered in the envelope. */
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '../errors.js';
import { parseName, unsafePathReason } from '../naming.js';
import type { RequestTarget, ServerContext } from './context.js';
import { OBJECT_PREFIX } from './presign.js';
import { parseQueryParameters } from './query-parameters.js';
import { type ApiResponse, messageResponse, QUERY_HEADERS, RawJson } from './wire.js';

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

/** The answer to an upload whose `X-api-key` is not accepted. */
export const WRONG_API_KEY_MESSAGE = 'Forbidden: the X-api-key given is not valid for this server.';

const ROUTES = ['upload', 'download', 'query'] as const;

/** The API route a path belongs to, with the rest of the path after `/<route>/`; undefined for other paths. */
export function apiRouteOf(path: string): { route: (typeof ROUTES)[number]; rest: string } | undefined {
  for (const route of ROUTES) {
    if (path === `/${route}`) return { route, rest: '' };
    if (route !== 'query' && path.startsWith(`/${route}/`))
      return { route, rest: path.slice(route.length + 2) };
  }
  return undefined;
}

/** The answer to a path that is no route. */
export function notFoundResponse(path: string): ApiResponse {
  return messageResponse(
    404,
    `Not found: there is no route ${path}. Routes are GET /upload/{filepath}, GET /download/{filepath} and GET /query.`,
  );
}

/** The answer to a route called with the wrong method. */
export function methodNotAllowedResponse(method: string, path: string): ApiResponse {
  return messageResponse(405, `Method ${method} is not allowed on ${path}; use GET.`, { Allow: 'GET' });
}

function unsafePathResponse(rest: string): ApiResponse | undefined {
  const reason = unsafePathReason(rest);
  return reason ? messageResponse(400, `Invalid path ${JSON.stringify(rest)}: ${reason}.`) : undefined;
}

/** `GET /upload/{filepath}`: checks the key and the name, then hands out a pre-signed PUT URL. */
export async function upload(
  context: ServerContext,
  req: IncomingMessage,
  rest: string,
): Promise<ApiResponse> {
  if (context.checkApiKey) {
    const header = req.headers['x-api-key'];
    const problem = context.checkApiKey(Array.isArray(header) ? header[0] : header);
    if (problem === 'missing') return messageResponse(401, MISSING_API_KEY_MESSAGE);
    if (problem === 'wrong') return messageResponse(403, WRONG_API_KEY_MESSAGE);
  }
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
  if (context.index.has(key) || (await context.store.occupied(key))) {
    return messageResponse(409, `${baseUrl}${OBJECT_PREFIX}${key} already exists.`);
  }
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: context.signer.sign(baseUrl, 'PUT', key),
  };
}

/** `GET /download/{filepath}`: redirects to a pre-signed GET URL of a stored object. */
export function download(context: ServerContext, req: IncomingMessage, rest: string): ApiResponse {
  if (rest === '') return messageResponse(400, DOWNLOAD_NO_FILE_MESSAGE);
  const unsafe = unsafePathResponse(rest);
  if (unsafe) return unsafe;
  if (!context.index.has(rest)) return messageResponse(404, DOWNLOAD_NOT_FOUND_MESSAGE);
  const url = context.signer.sign(context.baseUrl(req), 'GET', rest);
  return {
    statusCode: 302,
    headers: { 'Content-Type': 'text/html', Location: url },
    body: { download_url: url },
  };
}

/** `GET /query`: the records of stored files matching every filter, ordered by path. */
export function query(context: ServerContext, target: RequestTarget): ApiResponse {
  const parsed = parseQueryParameters(target.query);
  if ('problem' in parsed) return { statusCode: 400, headers: { ...QUERY_HEADERS }, body: parsed.problem };
  return {
    statusCode: 200,
    headers: { ...QUERY_HEADERS },
    body: new RawJson(context.index.queryChunks(parsed.filters)),
  };
}
