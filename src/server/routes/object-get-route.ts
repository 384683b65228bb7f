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
  const object: OpenObject | undefined = (await context.index.has(key))
    ? await context.store.open(key)
    : undefined;
  if (!object) {
    context.faults.sendError(res, 404, `No such object: ${key}`);
    return;
  }
  const answer = new ObjectAnswer(context, req, res, key, object, await digestsOf(context, object));
  if (!(await answer.preconditionsHold())) return;
  const range = await answer.range();
  if (range === 'refused') return;
  await answer.describeBody(range);
  await answer.send(range, head, outcome);
}

/** The object's digests, the object closed when they cannot be had. */
async function digestsOf(context: ServerContext, object: OpenObject): Promise<Digests> {
  try {
    return await context.track(object.digests());
  } catch (error) {
    await object.close();
    throw error;
  }
}

/** The bytes of an object a GET sends, first and last included. */
type ByteSpan = { start: number; end: number };

/**
 * The answer to one GET or HEAD of an open object: its validators and headers, the request's conditions and
 * range checked against them, then the headers of the body and the body. Every refusal closes the object first.
 */
class ObjectAnswer {
  readonly etag: string;
  readonly lastModified: string;
  readonly headers: Record<string, string>;

  constructor(
    readonly context: ServerContext,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly key: string,
    readonly object: OpenObject,
    readonly digests: Digests,
  ) {
    this.etag = context.faults.etag(etagOf(digests.md5));
    this.lastModified = object.mtime.toUTCString();
    this.headers = {
      'Content-Type': 'application/octet-stream',
      'Accept-Ranges': 'bytes',
      ETag: this.etag,
      'Last-Modified': this.lastModified,
      ...context.faults.objectHeaders(),
    };
  }

  /** False once a failed If-Match (412) or a matching If-None-Match (304) was answered. */
  async preconditionsHold(): Promise<boolean> {
    const { req, res, etag } = this;
    // RFC 9110 section 13.2.2: If-Match is evaluated first, then If-None-Match, then If-Range.
    const ifMatch = req.headers['if-match'];
    if (ifMatch !== undefined && !entityTagMatches(ifMatch, etag, 'strong')) {
      await this.object.close();
      this.context.faults.sendError(
        res,
        412,
        `Precondition failed: the object's ETag is ${etag}, not ${ifMatch}.`,
        {
          ETag: etag,
        },
      );
      return false;
    }
    if (entityTagMatches(req.headers['if-none-match'], etag, 'weak')) {
      await this.object.close();
      res.writeHead(304, this.headers);
      res.end();
      return false;
    }
    return true;
  }

  /** The bytes the request's Range asks for, undefined for the whole object, or `refused` once a 416 was answered. */
  async range(): Promise<ByteSpan | undefined | 'refused'> {
    const { req, etag, lastModified } = this;
    const { size } = this.object;
    const ifRange = req.headers['if-range'];
    // A stale If-Range (another object since) gets the whole new object, so a resumed download cannot mix versions.
    const rangeAllowed = ifRange === undefined || ifRange === etag || ifRange === lastModified;
    const range = rangeAllowed ? parseRange(req.headers.range, size) : undefined;
    if (range !== 'malformed' && range !== 'unsatisfiable') return range;
    await this.object.close();
    const message =
      range === 'malformed'
        ? `Invalid Range ${JSON.stringify(req.headers.range)}: use bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX.`
        : `Range not satisfiable: the object has ${size} bytes.`;
    this.context.faults.sendError(this.res, 416, message, { 'Content-Range': `bytes */${size}` });
    return 'refused';
  }

  /** The headers that describe the body sent: its range, or the whole object's checksums; its length. */
  async describeBody(range: ByteSpan | undefined): Promise<void> {
    const { context, headers, object } = this;
    const { size } = object;
    const { start, end } = range ?? { start: 0, end: size - 1 };
    // Content-MD5 and x-amz-checksum-crc32 describe the body sent, so only the whole object carries them.
    if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
    else {
      const extra = await context.faults.wholeObjectHeaders(
        context.store,
        this.key,
        size,
        object.mtime.getTime(),
        this.req.headers[CHECKSUM_MODE_HEADER] === 'ENABLED',
      );
      if (extra.keepOwn) {
        headers['Content-MD5'] = contentMd5Of(this.digests.md5);
        headers['x-amz-checksum-crc32'] = crc32HeaderOf(this.digests.crc32);
      }
      Object.assign(headers, extra.headers);
    }
    headers['Content-Length'] = String(end - start + 1);
  }

  /** The status line and headers, then (for a GET of any bytes) the body, its bytes counted into `outcome`. */
  async send(
    range: ByteSpan | undefined,
    head: boolean,
    outcome: { sent?: number | undefined },
  ): Promise<void> {
    const { res, object } = this;
    const { start, end } = range ?? { start: 0, end: object.size - 1 };
    res.writeHead(range ? 206 : 200, this.headers);
    if (head || end < start) {
      await object.close();
      res.end();
      return;
    }
    const { faults } = this.context;
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
}
