/** Requests to the object store: the URLs the service hands out, checked, and the bodies sent there, counted. */
import type { Readable } from 'node:stream';
import type { ExpectedChecksum } from '../core/checksums/checksum.js';
import { type Peer, ProtocolError } from '../core/errors.js';
import { streamModule } from '../core/on-first-use.js';
import { snippet } from '../core/text.js';
import { displayUrl, parseHttpUrl } from '../core/urls.js';
import type { AnswerBody, SentAnswer } from './body.js';
import type { DispatchRequest, UploadBody } from './dispatch.js';
import { objectError } from './failures.js';
import { splitStatedDigest } from './stated-digest.js';
import { OBJECT_HIGH_WATER_MARK } from './undici.js';

/** The answer of an object GET. */
export interface ObjectResponse {
  /** 200 or 206. */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The caller consumes or destroys it. */
  body: AnswerBody;
  /** The digest the object's URL carries, as the service stated it (see `stated-digest.ts`), if it does. */
  statedDigest?: ExpectedChecksum | undefined;
}

/** Which bytes of an object a GET asks for. */
export interface GetObjectOptions {
  /** First byte; default 0. */
  start?: number | undefined;
  /** Last byte, inclusive; default the object's end. */
  end?: number | undefined;
  /** Answer only while the object's ETag is this one (resuming a part of that object). */
  ifMatch?: string | undefined;
  signal?: AbortSignal | undefined;
}

export type { UploadBody } from './dispatch.js';

/** What a PUT to a pre-signed URL sends. */
export interface PutObjectOptions extends UploadBody {
  contentMd5?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** One request as the service client sends it: a dispatch's request, and whose address it goes to. */
export interface OutgoingRequest extends DispatchRequest {
  peer: Peer;
}

/** What an object transfer needs of the service client: one request (its retries are the caller's). */
export interface ObjectTransport {
  send(outgoing: OutgoingRequest): Promise<SentAnswer>;
}

/**
 * GET of an object URL (a range of it, while its ETag is `ifMatch`, when asked): one attempt, redirects
 * followed. The digest the URL carries is handed on with the answer, never sent.
 */
export async function getObjectWith(
  transport: ObjectTransport,
  url: string,
  options: GetObjectOptions,
): Promise<ObjectResponse> {
  const { url: sent, statedDigest } = splitStatedDigest(url);
  const target = parseObjectUrl(sent, 'GET');
  const start = options.start ?? 0;
  const headers: Record<string, string> = {};
  if (start > 0 || options.end !== undefined) headers.range = `bytes=${start}-${options.end ?? ''}`;
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  // Only for a URL that signs it (a service may; this project's S3 store no longer does, so that a plain GET of
  // its URLs works): the store then states its x-amz-checksum-* on a whole-object answer.
  if (signsChecksumMode(target)) headers['x-amz-checksum-mode'] = 'ENABLED';
  const response = await sendFollowing(transport, 'GET', target, headers, options.signal);
  if (response.statusCode === 200 || response.statusCode === 206) {
    return { status: response.statusCode, headers: response.headers, body: response.body, statedDigest };
  }
  throw await objectError('GET', response.url, response, options.signal);
}

/** PUT to an object URL with Content-Length (and Content-MD5 when given), never an API key. */
export async function putObjectWith(
  transport: ObjectTransport,
  url: string,
  options: PutObjectOptions,
): Promise<{ etag: string | undefined }> {
  const target = parseObjectUrl(url, 'PUT');
  // Object stores reject chunked PUTs: the dispatch states the length from the upload's size.
  const headers: Record<string, string> = {};
  if (options.contentMd5) headers['content-md5'] = options.contentMd5;
  // The options are the upload's body too (`PutObjectOptions` extends `UploadBody`).
  const response = await sendFollowing(transport, 'PUT', target, headers, options.signal, options);
  if (response.statusCode >= 200 && response.statusCode <= 299) {
    await response.body.dump().catch(() => undefined);
    const etag = response.headers.etag;
    return { etag: Array.isArray(etag) ? etag[0] : etag };
  }
  throw await objectError('PUT', response.url, response, options.signal);
}

/** Redirects followed for one request at most; a store that sends more is going round in circles. */
export const MAX_REDIRECTS = 5;

/**
 * Sends a request, following the store's redirects (S3 answers 307 Temporary Redirect to a bucket's other
 * region, and 301 PermanentRedirect): any of 301, 302, 303, 307, 308 for a GET, only 307 and 308 for a PUT
 * (the others would turn it into a GET), with the body sent again from the file. Targets are checked as the
 * service's URLs are: http(s) only, no credentials.
 */
async function sendFollowing(
  transport: ObjectTransport,
  method: 'GET' | 'PUT',
  first: URL,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  upload?: UploadBody,
): Promise<SentAnswer & { url: URL }> {
  const followed = method === 'GET' ? [301, 302, 303, 307, 308] : [307, 308];
  let url = first;
  for (let redirects = 0; ; redirects += 1) {
    const response = await transport.send({
      method,
      url,
      peer: 'object store',
      headers: signedHeadersOnly(url, headers),
      upload,
      signal,
    });
    const location = response.headers.location;
    const next = Array.isArray(location) ? location[0] : location;
    if (!followed.includes(response.statusCode) || next === undefined)
      return Object.assign(response, { url });
    await response.body.dump().catch(() => undefined);
    const source = `${method} ${displayUrl(url)}: ${response.statusCode} redirect`;
    if (redirects >= MAX_REDIRECTS) {
      throw new ProtocolError(`${source}: more than ${MAX_REDIRECTS} redirects in a row; giving up.`);
    }
    url = new URL(checkObjectUrl(next, source, method === 'GET' ? 'download' : 'upload', url));
  }
}

/**
 * True when a pre-signed URL signs `x-amz-checksum-mode` (a service may sign it into its download URLs): the
 * header is then sent on every GET of it, as the signature demands, and a whole-object answer states the
 * object's stored `x-amz-checksum-*` (S3 sends none without it).
 */
export function signsChecksumMode(url: URL): boolean {
  // The common case, asked for every object: no such name anywhere in the URL.
  if (!url.search.includes('x-amz-checksum-mode')) return false;
  return (url.searchParams.get('X-Amz-SignedHeaders') ?? '')
    .toLowerCase()
    .split(';')
    .includes('x-amz-checksum-mode');
}

/**
 * Headers to send to a pre-signed URL: S3 refuses (`HeadersNotSigned`) an `x-amz-*` header that the URL's
 * signature does not list, so one is sent only when `X-Amz-SignedHeaders` names it; Range, If-Match,
 * Content-Length and Content-MD5 need no signature.
 */
export function signedHeadersOnly(url: URL, headers: Record<string, string>): Record<string, string> {
  // The common case, asked for every object: no x-amz-* header to weigh against the signature.
  if (!Object.keys(headers).some((name) => name.toLowerCase().startsWith('x-amz-'))) return headers;
  const signed = (url.searchParams.get('X-Amz-SignedHeaders') ?? '').toLowerCase().split(';');
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!lower.startsWith('x-amz-') || signed.includes(lower)) kept[name] = value;
  }
  return kept;
}

/** Checks a URL the service handed out for an object: only http(s) is ever requested, never with credentials. */
export function checkObjectUrl(
  value: string,
  source: string,
  what: 'upload' | 'download',
  base?: URL,
): string {
  const url = parseHttpUrl(value, base);
  if (url === 'not a URL')
    throw new ProtocolError(`${source}: refusing the ${what} URL ${shown(value)}: it is not a URL.`);
  if (url === 'not http(s)') {
    throw new ProtocolError(
      `${source}: refusing the ${what} URL ${shown(value)}: only http:// and https:// URLs are followed.`,
    );
  }
  if (url.username || url.password) {
    throw new ProtocolError(`${source}: refusing the ${what} URL: it carries credentials in its address.`);
  }
  return url.href;
}

/** Parses an object URL the caller gives, refusing what is not http(s). */
export function parseObjectUrl(value: string, method: string): URL {
  const url = parseHttpUrl(value);
  if (url === 'not a URL') throw new ProtocolError(`${method} ${shown(value)}: not a URL.`);
  if (url === 'not http(s)')
    throw new ProtocolError(`${method} ${shown(value)}: only http:// and https:// URLs are used.`);
  return url;
}

/** A URL quoted for a message: made only when one is refused (every object's URL passes these checks). */
function shown(value: string): string {
  return JSON.stringify(snippet(value));
}

/** A readable that reports how many bytes went through it. */
export function countBytes(source: Readable, onBytes: ((sent: number) => void) | undefined): Readable {
  if (!onBytes) return source;
  let sent = 0;
  const { pipeline, Transform } = streamModule();
  const counter = new Transform({
    highWaterMark: OBJECT_HIGH_WATER_MARK,
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      onBytes(sent);
      done(null, chunk);
    },
  });
  pipeline(source, counter, () => {
    // Errors travel to `counter` (and from there to the request); nothing more to do here.
  });
  return counter;
}

/** A response header by its lower-case name, the first value when repeated. */
export function header(response: ObjectResponse, name: string): string | undefined {
  const value =
    response.headers[name] ??
    Object.entries(response.headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** A numeric header, refused when it is not a whole number (`shown` gives the URL as the refusal names it). */
export function numericHeader(
  response: ObjectResponse,
  name: string,
  shown: () => string,
): number | undefined {
  const value = header(response, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()))
    throw new ProtocolError(`GET ${shown()}: unreadable ${name} ${JSON.stringify(value)}.`);
  return Number(value);
}
