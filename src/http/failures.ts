/**
 * Unsuccessful answers, translated into the error classes of this package (a failure to get an answer at all is
 * `transport-failures.ts`'s), with method, URL and outcome in the message and what to do in the hint. Hints name
 * no command-line flag: the command line adds those, keyed by error code.
 */

import { AbortedError, ApiError, type ErrorCode, type Peer, STORE_ERRNO_HEADER } from '../core/errors.js';
import { reasonPhrase } from '../core/on-first-use.js';
import { snippet } from '../core/text.js';
import { displayUrl } from '../core/urls.js';
import type { SentAnswer } from './body.js';
import {
  type ApiAnswer,
  markupElement,
  markupText,
  messageOf,
  parseRetryAfter,
  readText,
} from './envelope.js';

/** Error bodies of object routes are short texts; read no more than this of them. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

/** What the caller of an API route knows of a failed answer: its error code and meaning, and the route asked. */
export interface ApiFailureFacts {
  code?: ErrorCode | undefined;
  /** What the answer means, said in place of the service's own words. */
  meaning?: string | undefined;
  route?: ApiError['route'];
}

/** The ApiError of an unsuccessful API answer, with a hint where one helps. */
export function apiError(
  method: string,
  url: URL,
  answer: ApiAnswer,
  { code, meaning, route }: ApiFailureFacts = {},
): ApiError {
  return new ApiError(
    {
      method,
      url: url.href,
      status: answer.status,
      message: messageOf(answer),
      requestId: requestIdOf(answer.headers['x-request-id']),
    },
    {
      meaning,
      code: code ?? (answer.status === 404 ? 'E_NOT_FOUND' : 'E_API'),
      hint: statusHint(answer.status, url, 'service', route),
      retryAfterMs: parseRetryAfter(answer.headers['retry-after']),
      route,
    },
  );
}

/** The server's id of a request, as its `X-Request-Id` answer header gave it (a short printable word). */
export function requestIdOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^[\x21-\x7e]{1,128}$/.test(value) ? value : undefined;
}

function statusHint(status: number, url: URL, peer: Peer, route?: ApiError['route']): string | undefined {
  if (status === 500) return 'The server failed to answer; try again later.';
  if (status === 502) return 'The service may be temporarily down; try again in a few minutes.';
  if (status === 503 || status === 504) return 'The service is busy or temporarily down; try again later.';
  if (status === 429) return 'The service is limiting requests; wait a little and try again.';
  if (status === 401 || status === 403) {
    // Only the object store's pre-signed addresses expire; a refusal from the service itself is about the
    // credentials sent to it, whatever the route (issue 19: a wrong key on query was told its URL expired).
    if (peer === 'object store') {
      return url.search.length > 0
        ? 'The pre-signed URL may have expired; run the command again.'
        : undefined;
    }
    if (route === 'upload') return 'Uploads need a valid API key.';
    if (url.pathname.startsWith('/authorized/') || url.pathname.includes('/authorized/')) {
      return 'The bearer token is not valid for this service.';
    }
    return 'The API key is not valid for this service.';
  }
  return undefined;
}

/** The error of an unsuccessful object-store answer (a short plain-text body). */
export async function objectError(
  method: string,
  url: URL,
  response: SentAnswer,
  signal: AbortSignal | undefined,
): Promise<ApiError> {
  const shown = displayUrl(url);
  let text = '';
  try {
    text = await readText(response.body, MAX_ERROR_BODY_BYTES, `${method} ${shown}`, true);
  } catch {
    // The status says enough when the error body cannot be read, unless the user cancelled.
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
  }
  const status = response.statusCode;
  // An S3 error document: its Code and Message lead the message (`403 AccessDenied: Request has expired`).
  const message = snippet(markupText(text, status), 500) || reasonPhrase(status) || 'Unknown status';
  const storeCode = text.trimStart().startsWith('<') ? markupElement(text, 'Code') : undefined;
  const retryAfter = response.headers['retry-after'];
  return new ApiError(
    { method, url: shown, status, message, requestId: requestIdOf(response.headers['x-request-id']) },
    {
      code: status === 404 ? 'E_NOT_FOUND' : 'E_API',
      hint: statusHint(status, url, 'object store'),
      retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      storeCode,
      storeErrno: storeErrnoOf(response.headers[STORE_ERRNO_HEADER]),
      urlExpired: status === 403 && saysExpired(message),
      peer: 'object store',
    },
  );
}

/** The errno an object store declared (`ENOSPC`), when the header holds one. */
function storeErrnoOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^E[A-Z0-9]{1,15}$/.test(value) ? value : undefined;
}

/**
 * A last resort, read where the answer is: S3 says a pre-signed URL expired only in words (`AccessDenied`,
 * `Request has expired`), as does the reference server (`This URL expired at …`).
 */
function saysExpired(message: string): boolean {
  return /\bexpired\b/i.test(message);
}

/** A 403 on a URL at least this old is taken for an expired URL, whatever its message says. */
export const EXPIRY_SUSPECT_AFTER_MS = 5_000;

/** True when `error` says that a pre-signed URL issued at `issuedAt` (ms) has expired, or may have. */
export function isExpiredUrl(error: unknown, issuedAt: number, now = Date.now()): boolean {
  if (!(error instanceof ApiError) || error.status !== 403) return false;
  return error.urlExpired || now - issuedAt >= EXPIRY_SUSPECT_AFTER_MS;
}
