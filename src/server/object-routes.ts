/**
 * The object routes behind pre-signed URLs (`/objects/<key>`). They answer like an object store in every
 * wire mode: plain HTTP status, raw bytes, short plain-text errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ValidationError } from '../errors.js';
import { parsePath } from '../naming.js';
import { unsafePathReason } from '../path-safety.js';
import { contentMd5Of, etagOf } from './checksums.js';
import type { RequestTarget, ServerContext } from './context.js';
import { type OpenObject, PutRejected, type PutResult, StoreWriteError } from './object-store.js';
import { OBJECT_PREFIX } from './presign.js';

const ALLOWED = 'GET, HEAD, PUT';

/**
 * After answering an upload the store refused while its body is still arriving, the rest is read and thrown
 * away for at most this long (and until a pause of `DRAIN_IDLE_MS`) before the connection is closed: a
 * client that is still sending would otherwise meet a reset and never read the answer (nginx's
 * lingering_time and lingering_timeout are 30 s and 5 s for the same reason).
 */
const DRAIN_LIMIT_MS = 30_000;
const DRAIN_IDLE_MS = 5_000;

/** A failure an object route answered itself, for the request log. */
export interface AnsweredFailure {
  error: unknown;
  /** True once the whole answer was handed to the connection, even if the client hangs up before it is ended. */
  written: boolean;
}

const answeredFailures = new WeakMap<ServerResponse, AnsweredFailure>();

/** The store failure an object route answered on `res` (a 507 or 500 it sent itself), if any. */
export function answeredFailureOf(res: ServerResponse): AnsweredFailure | undefined {
  return answeredFailures.get(res);
}

/**
 * The status and plain-text reason of a write the store refused, by errno: a full store is S3's and WebDAV's
 * 507 Insufficient Storage (the client may try again once there is room); anything else is the server's
 * fault, a 500 that names the errno so the operator knows where to look.
 */
export function storeFailureAnswer(code: string): { status: 500 | 507; message: string } {
  const nothing = 'nothing was stored.';
  switch (code) {
    case 'ENOSPC':
      return { status: 507, message: `The store is full (ENOSPC); ${nothing}` };
    case 'EDQUOT':
      return { status: 507, message: `The store's disk quota is used up (EDQUOT); ${nothing}` };
    case 'EROFS':
      return { status: 500, message: `The store is read-only (EROFS); ${nothing}` };
    case 'EACCES':
    case 'EPERM':
      return { status: 500, message: `The server may not write to the store (${code}); ${nothing}` };
    case 'ENAMETOOLONG':
      return {
        status: 500,
        message: `The store's folder is too deep for this key: the path is longer than the file system allows (ENAMETOOLONG); ${nothing}`,
      };
    case 'EIO':
      return { status: 500, message: `The store's disk failed to write (EIO); ${nothing}` };
    case 'EFBIG':
      return {
        status: 500,
        message: `The object is larger than the store may write in one file (EFBIG); ${nothing}`,
      };
    default:
      return { status: 500, message: `Writing to the store failed (${code}); ${nothing}` };
  }
}

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
  const expectsContinue = /^100-continue$/i.test(req.headers.expect ?? '');
  let continued = false;
  let stored: PutResult;
  try {
    stored = await context.track(
      context.store.put(key, req, length, {
        md5,
        // Only now ask for the body: a refused upload, or a store that cannot even open a file, never sends it.
        onReady: () => {
          if (!expectsContinue || res.destroyed) return;
          res.writeContinue();
          continued = true;
        },
      }),
    );
  } catch (error) {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    if (error instanceof PutRejected) {
      // A stalled client gets its answer and loses the connection: it is not sending the rest anyway.
      sendText(res, error.status, error.message, error.status === 408 ? { Connection: 'close' } : {});
      return;
    }
    if (error instanceof StoreWriteError) {
      const { status, message } = storeFailureAnswer(error.code);
      const bodyComing = !req.complete && !(expectsContinue && !continued);
      await context.track(answerFailure(req, res, status, message, error, bodyComing));
      return;
    }
    // Mostly the client went away: the store removed the partial upload and there is no one left to answer.
    if (req.destroyed) {
      res.destroy();
      return;
    }
    throw error;
  }
  context.index.add(stored);
  res.writeHead(200, { ETag: etagOf(stored.md5), 'Content-Length': '0' });
  res.end();
}

/**
 * Answers a write the store refused. When the body is still coming, the answer goes out at once with
 * `Connection: close`, and the rest of the body is read and dropped (bounded) before the connection is
 * ended, so that the client reads the answer rather than a reset and does not send the upload again.
 */
function answerFailure(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  error: unknown,
  bodyComing: boolean,
): Promise<void> {
  const failure: AnsweredFailure = { error, written: false };
  answeredFailures.set(res, failure);
  const body = Buffer.from(`${message}\n`, 'utf8');
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(body.length),
  };
  // A body not read to its end leaves the connection unusable for another request.
  if (!req.complete) headers.Connection = 'close';
  if (!bodyComing) {
    res.writeHead(status, headers);
    res.end(body);
    return Promise.resolve();
  }
  return new Promise((resolvePromise) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      clearTimeout(idle);
      req.off('data', onData).off('end', finish).off('close', finish);
      if (!res.destroyed) res.end();
      resolvePromise();
    };
    const limit = setTimeout(finish, DRAIN_LIMIT_MS);
    const idle = setTimeout(finish, DRAIN_IDLE_MS);
    const onData = () => idle.refresh();
    res.writeHead(status, headers);
    // The whole answer, without ending the response: ending it would close the connection at once.
    res.write(body, () => {
      failure.written = true;
    });
    req.on('data', onData).on('end', finish).on('close', finish);
    req.resume();
  });
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

/**
 * True when an `If-Match` or `If-None-Match` list names `etag` (or is `*`). `If-Match` compares strongly (a
 * weak tag never matches); `If-None-Match` weakly (`W/"x"` matches `"x"`), as RFC 9110 section 8.8.3.2 says.
 */
export function entityTagMatches(
  header: string | undefined,
  etag: string,
  comparison: 'strong' | 'weak',
): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((listed) => {
    const tag = listed.trim();
    if (comparison === 'strong') return tag === etag;
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
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
  let md5: Buffer;
  try {
    md5 = await context.track(context.store.md5Of(key, object));
  } catch (error) {
    await object.handle.close();
    throw error;
  }
  const { size, mtime } = object.stats;
  const etag = etagOf(md5);
  const lastModified = mtime.toUTCString();
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    ETag: etag,
    'Last-Modified': lastModified,
  };
  // RFC 9110 section 13.2.2: If-Match is evaluated first, then If-None-Match, then If-Range.
  const ifMatch = req.headers['if-match'];
  if (ifMatch !== undefined && !entityTagMatches(ifMatch, etag, 'strong')) {
    await object.handle.close();
    sendText(res, 412, `Precondition failed: the object's ETag is ${etag}, not ${ifMatch}.`, { ETag: etag });
    return;
  }
  if (entityTagMatches(req.headers['if-none-match'], etag, 'weak')) {
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
  // Content-MD5 describes the body sent, so only the whole object carries it.
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  else headers['Content-MD5'] = contentMd5Of(md5);
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
