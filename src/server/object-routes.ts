/**
 * The object routes behind pre-signed URLs (`/objects/<key>`). They answer like an object store in every
 * wire mode: plain HTTP status, raw bytes, short plain-text errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ValidationError } from '../errors.js';
import { parsePath, unsafePathReason } from '../naming.js';
import type { RequestTarget, ServerContext } from './context.js';
import { type OpenObject, objectEtag, PutRejected } from './object-store.js';
import { OBJECT_PREFIX } from './presign.js';

const ALLOWED = 'GET, HEAD, PUT';

function sendText(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  const body = Buffer.from(`${message}\n`, 'utf8');
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(body.length),
    ...headers,
  });
  res.end(body);
}

/** True when the path is an object route. */
export function isObjectPath(path: string): boolean {
  return path.startsWith(OBJECT_PREFIX);
}

/** Handles a request to `/objects/<key>`. */
export async function handleObject(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: RequestTarget,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') {
    sendText(res, 405, `Method ${method} is not allowed on objects; use ${ALLOWED}.`, { Allow: ALLOWED });
    return;
  }
  const key = target.path.slice(OBJECT_PREFIX.length);
  const unsafe = unsafePathReason(key);
  if (unsafe) {
    sendText(res, 400, `Invalid object key: ${unsafe}.`);
    return;
  }
  const problem = context.signer.problem(method, key, target.query);
  if (problem) {
    sendText(res, 403, problem);
    return;
  }
  try {
    parsePath(key);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    sendText(res, 400, `Invalid object key: ${error.problems.join(' ')}`);
    return;
  }
  if (method === 'PUT') await putObject(context, req, res, key);
  else await getObject(context, req, res, key, method === 'HEAD');
}

async function putObject(context: ServerContext, req: IncomingMessage, res: ServerResponse, key: string) {
  const lengthHeader = req.headers['content-length'];
  if (lengthHeader === undefined || req.headers['transfer-encoding'] !== undefined) {
    sendText(res, 411, 'Content-Length required: send the object with a Content-Length, not chunked.');
    return;
  }
  if (!/^\d{1,15}$/.test(lengthHeader)) {
    sendText(res, 400, 'Content-Length must be a whole number of bytes.');
    return;
  }
  const length = Number(lengthHeader);
  let md5: Buffer | undefined;
  const md5Raw = req.headers['content-md5'];
  const md5Header = Array.isArray(md5Raw) ? md5Raw.join(',') : md5Raw;
  if (md5Header !== undefined) {
    md5 = Buffer.from(md5Header, 'base64');
    if (md5.length !== 16 || md5.toString('base64') !== md5Header) {
      sendText(res, 400, 'Content-MD5 must be the base64 of the 16-byte MD5 digest of the body.');
      return;
    }
  }
  if (context.index.has(key) || (await context.store.occupied(key))) {
    sendText(res, 409, `${key} already exists.`);
    return;
  }
  // Only now ask for the body, so a refused upload never sends it.
  if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
  let stored: Awaited<ReturnType<typeof context.store.put>>;
  try {
    stored = await context.track(context.store.put(key, req, length, md5));
  } catch (error) {
    if (error instanceof PutRejected) {
      if (!res.headersSent && !res.destroyed) sendText(res, error.status, error.message);
      return;
    }
    // Mostly the client went away: the store removed the partial upload and there is no one left to answer.
    if (res.destroyed || req.destroyed) {
      res.destroy();
      return;
    }
    throw error;
  }
  context.index.add(stored);
  res.writeHead(200, { ETag: objectEtag(stored.size, stored.mtimeMs), 'Content-Length': '0' });
  res.end();
}

/** A `Range` header resolved against an object's size: the bytes to send, a 416, or the whole object. */
type RangeResult = { start: number; end: number } | 'malformed' | 'unsatisfiable' | undefined;

const BYTE_RANGE = /^\s*(\d*)\s*-\s*(\d*)\s*$/;

/**
 * Reads a `Range` header. A header without a unit, or with another unit, is ignored (RFC 9110 section
 * 14.2: MUST), and so is a list of several ranges (MAY), which would need a multipart answer no client of
 * the service asks for: both get the whole object. A `bytes=` range that is malformed (`bytes=9-2`, `bytes=x`) or starts past the end is
 * refused with 416, so a client learns its request was wrong instead of silently getting other bytes.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return undefined;
  const unit = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=(.*)$/.exec(header);
  if (!unit || (unit[1] as string).toLowerCase() !== 'bytes') return undefined;
  const specs = (unit[2] as string).split(',');
  const ranges = specs.map((spec) => BYTE_RANGE.exec(spec));
  if (ranges.some((match) => !match || (match[1] === '' && match[2] === ''))) return 'malformed';
  if (ranges.length > 1) return undefined;
  const [, first = '', last = ''] = ranges[0] as RegExpExecArray;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return 'malformed';
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Number(last);
  return { start, end: Math.min(end, size - 1) };
}

async function getObject(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
  head: boolean,
) {
  const object: OpenObject | undefined = context.index.has(key)
    ? await context.store.openForRead(key)
    : undefined;
  if (!object) {
    sendText(res, 404, `No such object: ${key}`);
    return;
  }
  const { size, mtimeMs, mtime } = object.stats;
  const etag = objectEtag(size, mtimeMs);
  const lastModified = mtime.toUTCString();
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    ETag: etag,
    'Last-Modified': lastModified,
  };
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    await object.handle.close();
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'];
  // A stale If-Range (another object since) gets the whole new object, so a resumed download cannot mix versions.
  const rangeAllowed = ifRange === undefined || ifRange === etag || ifRange === lastModified;
  const range = rangeAllowed ? parseRange(req.headers.range, size) : undefined;
  if (range === 'malformed' || range === 'unsatisfiable') {
    await object.handle.close();
    const message =
      range === 'malformed'
        ? `Invalid Range ${JSON.stringify(req.headers.range)}: use bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX.`
        : `Range not satisfiable: the object has ${size} bytes.`;
    sendText(res, 416, message, { 'Content-Range': `bytes */${size}` });
    return;
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  headers['Content-Length'] = String(end - start + 1);
  res.writeHead(range ? 206 : 200, headers);
  if (head || end < start) {
    await object.handle.close();
    res.end();
    return;
  }
  try {
    await pipeline(context.store.readStream(object, start, end), res);
  } catch {
    // The client went away mid-download; the read stream closed the file.
  }
}
