/** The GET and HEAD object routes: whole objects, byte ranges and conditional requests. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ServerContext } from '../context.js';
import { CHECKSUM_MODE_HEADER } from '../faults.js';
import { contentMd5Of, crc32HeaderOf, type Digests, etagOf } from '../objects/checksums.js';
import type { OpenObject } from '../objects/object-store.js';

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

/** Answers a GET (or, with `head`, a HEAD) of `key` from the store. */
export async function getObject(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
  head: boolean,
  outcome: { sent?: number | undefined } = {},
): Promise<void> {
  const { faults } = context;
  const object: OpenObject | undefined = (await context.index.has(key))
    ? await context.store.open(key)
    : undefined;
  if (!object) {
    faults.sendError(res, 404, `No such object: ${key}`);
    return;
  }
  let digests: Digests;
  try {
    digests = await context.track(object.digests());
  } catch (error) {
    await object.close();
    throw error;
  }
  const { size, mtime } = object;
  const etag = faults.etag(etagOf(digests.md5));
  const lastModified = mtime.toUTCString();
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    ETag: etag,
    'Last-Modified': lastModified,
    ...faults.objectHeaders(),
  };
  // RFC 9110 section 13.2.2: If-Match is evaluated first, then If-None-Match, then If-Range.
  const ifMatch = req.headers['if-match'];
  if (ifMatch !== undefined && !entityTagMatches(ifMatch, etag, 'strong')) {
    await object.close();
    faults.sendError(res, 412, `Precondition failed: the object's ETag is ${etag}, not ${ifMatch}.`, {
      ETag: etag,
    });
    return;
  }
  if (entityTagMatches(req.headers['if-none-match'], etag, 'weak')) {
    await object.close();
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'];
  // A stale If-Range (another object since) gets the whole new object, so a resumed download cannot mix versions.
  const rangeAllowed = ifRange === undefined || ifRange === etag || ifRange === lastModified;
  const range = rangeAllowed ? parseRange(req.headers.range, size) : undefined;
  if (range === 'malformed' || range === 'unsatisfiable') {
    await object.close();
    const message =
      range === 'malformed'
        ? `Invalid Range ${JSON.stringify(req.headers.range)}: use bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX.`
        : `Range not satisfiable: the object has ${size} bytes.`;
    faults.sendError(res, 416, message, { 'Content-Range': `bytes */${size}` });
    return;
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  // Content-MD5 and x-amz-checksum-crc32 describe the body sent, so only the whole object carries them.
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  else {
    const extra = await faults.wholeObjectHeaders(
      context.store,
      key,
      size,
      mtime.getTime(),
      req.headers[CHECKSUM_MODE_HEADER] === 'ENABLED',
    );
    if (extra.keepOwn) {
      headers['Content-MD5'] = contentMd5Of(digests.md5);
      headers['x-amz-checksum-crc32'] = crc32HeaderOf(digests.crc32);
    }
    Object.assign(headers, extra.headers);
  }
  headers['Content-Length'] = String(end - start + 1);
  res.writeHead(range ? 206 : 200, headers);
  if (head || end < start) {
    await object.close();
    res.end();
    return;
  }
  const body = object.stream(start, end);
  outcome.sent = 0;
  body.on('data', (chunk: Buffer) => {
    outcome.sent = (outcome.sent ?? 0) + chunk.length;
    if (faults.counting) faults.sent(chunk.length);
  });
  try {
    await pipeline(body, res);
  } catch {
    // The client went away mid-download; the read stream closed the file.
  }
}
