/**
 * The routes of one file: `/upload/{filepath}` (a reservation and a pre-signed PUT, in its turn) and
 * `/download/{filepath}` (a redirect to a pre-signed GET), with the answers about a name that is taken.
 */
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '../../core/errors.js';
import { parseName } from '../../naming/names.js';
import { unsafePathReason } from '../../naming/path-safety.js';
import { parseSpecName } from '../../naming/spec-names.js';
import type { RouteAccess, ServerContext } from '../context.js';
import type { Reservation } from '../metadata/metadata-index.js';
import { type KnownDigests, withDigestFragment } from '../objects/checksums.js';
import { OBJECT_PREFIX } from '../objects/presign.js';
import { MAX_WAITING_UPLOADS } from '../turns.js';
import { type ApiResponse, messageResponse } from '../wire.js';
import { reserveUpload } from './direct-upload.js';

/** The real service's answer to `/download` without a path. */
export const DOWNLOAD_NO_FILE_MESSAGE =
  'No file requested for download. Please provide a filename in the path. Eg. /download/path/to/file/filename.pkts';

/** The real service's answer to `/download` of a file it does not have. */
export const DOWNLOAD_NOT_FOUND_MESSAGE =
  'File not found, make sure you include the full path to the file in the request, e.g. /download/path/to/file/filename.pkts.';

/** The answer to `/upload` without a path. */
export const UPLOAD_NO_FILE_MESSAGE =
  'No file given to upload. Please provide the file path, e.g. /upload/imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';

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
  // Only the name counts: the key is rebuilt from it, whatever folders the client put in front. The
  // specification's service knows its own names only; today's reads every kind of both generations.
  const name = rest.slice(rest.lastIndexOf('/') + 1);
  let key: string;
  try {
    key = (context.dialect === 'spec' ? parseSpecName(name) : parseName(name)).path;
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

/**
 * `GET /download/{filepath}` (and HEAD, whose answer the wire sends without its body): redirects to a
 * pre-signed GET URL of a stored object, which any client can follow as it is; the URL's fragment states the
 * object's checksum for a client that checks the bytes (the answer keeps the specification's exact shape).
 */
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
  const [url, digests] = await Promise.all([
    context.store.presign('GET', rest, {
      baseUrl: context.baseUrl(req),
      lifetimeSeconds: context.faults.options.urlLifeSeconds,
    }),
    knownDigests(context, rest),
  ]);
  const location = withDigestFragment(context.faults.downloadUrl(url), digests);
  return {
    statusCode: 302,
    headers: { 'Content-Type': 'text/html', Location: location },
    body: { download_url: location },
  };
}

/**
 * The checksums known of a stored object: those one look at it tells (a bucket's HEAD: those recorded with the
 * object, or a plain ETag's MD5) or, for a store whose bytes this server serves, those its object routes state
 * (kept beside the object). Never the bytes of a bucket's object read for a redirect. None when none is known,
 * or the store did not answer: the redirect works without them.
 */
async function knownDigests(context: ServerContext, key: string): Promise<KnownDigests> {
  if (!context.faults.statesDigests) return {};
  try {
    const head = await context.store.head(key);
    if (head?.md5 || !context.signer) return head ?? {};
    const object = await context.store.open(key);
    if (!object) return {};
    try {
      return await context.track(object.digests());
    } finally {
      await object.close();
    }
  } catch {
    return {};
  }
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
