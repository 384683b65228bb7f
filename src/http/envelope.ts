/**
 * Reading API answers: the service's envelope in whichever wire form carried it, and the readable part of
 * error bodies (gateways answer with HTML pages, object stores with XML documents).
 */

import { ProtocolError } from '../core/errors.js';
import { reasonPhrase } from '../core/on-first-use.js';
import { snippet } from '../core/text.js';
import type { AnswerBody, ReusedBuffer } from './body.js';
import { JsonArrayText, LAZY_FROM_BYTES, lazyArray, objectWithLazyArray } from './json-array.js';

/** An API answer after the envelope has been read: the outcome, whichever wire form carried it. */
export interface ApiAnswer {
  status: number;
  /** Header names in lower case; the envelope's headers win over the HTTP ones. */
  headers: Record<string, string>;
  /** Parsed JSON when the body was JSON (or a JSON-encoded string), the text otherwise. */
  body: unknown;
}

/**
 * Reads the outcome of an API answer, whichever wire form carried it (the service wraps answers, a gateway in
 * front of it may not): an HTTP body that is a JSON object with a numeric `statusCode` is the envelope and its
 * fields are the outcome (its `body` a string, a JSON-encoded string, an object or an array); anything else is an
 * unwrapped gateway answer. `body` is the HTTP body, as text or as the UTF-8 bytes received. With `lazyArrays`, a
 * body of 100 KiB or more that is an array (bare, in the envelope, or JSON-encoded there) comes as a
 * `JsonArrayText`, its elements parsed as they are taken: a query's page is taken record by record, and parsed
 * whole its records, and its text, would all outlive the page in the old generation.
 */
export function readEnvelope(
  httpStatus: number,
  httpHeaders: Record<string, string | string[] | undefined>,
  body: string | Buffer,
  source: string,
  { lazyArrays = false }: { lazyArrays?: boolean } = {},
): ApiAnswer {
  const headers = lowerCaseHeaders(httpHeaders);
  let parsed: unknown;
  let isJson = false;
  let lazyBody: JsonArrayText | undefined;
  if (lazyArrays && body.length >= LAZY_FROM_BYTES) {
    const bare = lazyArray(body);
    const wrapped = bare ? undefined : objectWithLazyArray(body, 'body');
    if (bare) return { status: httpStatus, headers, body: bare };
    if (wrapped && isRecord(wrapped.object) && typeof wrapped.object.statusCode === 'number') {
      parsed = wrapped.object;
      isJson = true;
      lazyBody = wrapped.array;
    }
  }
  const text = lazyBody ? '' : typeof body === 'string' ? body : body.toString('utf8');
  if (!isJson && NOT_BLANK.test(text)) {
    try {
      parsed = JSON.parse(text);
      isJson = true;
    } catch {
      // Not JSON: a plain-text gateway answer (or an HTML error page), read as text below.
    }
  }
  if (isJson && isRecord(parsed) && typeof parsed.statusCode === 'number') {
    const status = parsed.statusCode;
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new ProtocolError(`${source}: the answer's envelope carries an impossible statusCode ${status}.`);
    }
    // The HTTP headers' copy is this answer's own: the envelope's are written over it.
    if (isRecord(parsed.headers)) lowerCaseHeaders(parsed.headers, headers);
    const body = lazyBody ?? decodeBody(parsed.body, lazyArrays);
    return { status, headers, body };
  }
  return { status: httpStatus, headers, body: isJson ? parsed : text };
}

/**
 * An envelope body: a string that holds JSON (the service's Lambda `json.dumps` its bodies) is decoded; with
 * `lazyArrays`, a large one holding an array is scanned rather than parsed.
 */
function decodeBody(body: unknown, lazyArrays: boolean): unknown {
  if (body === undefined || body === null) return '';
  if (typeof body !== 'string') return body;
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('"')) {
    const lazy = lazyArrays && trimmed.length >= LAZY_FROM_BYTES ? lazyArray(trimmed) : undefined;
    if (lazy) return lazy;
    try {
      return JSON.parse(trimmed);
    } catch {
      return body;
    }
  }
  return body;
}

/** Text with something in it besides white space (as `trim` sees it), told without a trimmed copy. */
const NOT_BLANK = /\S/;

/** `headers` with names in lower case and values as text, written into `into` (a new object by default). */
function lowerCaseHeaders(
  headers: Record<string, unknown>,
  into: Record<string, string> = {},
): Record<string, string> {
  for (const key of Object.keys(headers)) {
    const value = headers[key];
    if (typeof value === 'string') into[key.toLowerCase()] = value;
    else if (Array.isArray(value)) into[key.toLowerCase()] = value.map(String).join(', ');
    else if (typeof value === 'number') into[key.toLowerCase()] = String(value);
  }
  return into;
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message an answer's body carries, for error messages. */
export function messageOf(answer: ApiAnswer): string {
  const body = answer.body;
  let message: string | undefined;
  if (typeof body === 'string') message = markupText(body, answer.status);
  else if (body instanceof JsonArrayText) message = body.head(1000);
  else if (isRecord(body)) {
    const field = body.message ?? body.error ?? body.Message;
    message = typeof field === 'string' ? field : JSON.stringify(body);
  } else if (body !== undefined) message = JSON.stringify(body);
  if (!message) message = reasonPhrase(answer.status) ?? 'Unknown status';
  return snippet(message, 500);
}

/**
 * The readable part of an error body. Gateways and proxies answer with HTML pages and object stores with XML
 * documents: the page title (or text) and the store's `<Code>`/`<Message>` say what the markup buries.
 */
export function markupText(text: string, status: number): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('<')) return trimmed;
  const element = (name: string) => markupElement(trimmed, name);
  const storeCode = element('Code');
  const storeMessage = element('Message');
  if (storeCode || storeMessage) return [storeCode, storeMessage].filter(Boolean).join(': ');
  const readable =
    element('title') ??
    trimmed
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  // "502 Bad Gateway" under a status that is already printed would read "502 502 Bad Gateway".
  return readable.replace(new RegExp(`^${status}\\b\\s*`), '') || (reasonPhrase(status) ?? '');
}

/** The text of the first `<name>` element of a markup document, when there is one. */
export function markupElement(text: string, name: string): string | undefined {
  return new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`, 'i').exec(text)?.[1]?.trim() || undefined;
}

/** Reads a body as UTF-8 text, refusing (or, with `truncate`, cutting) bodies above `limit` bytes. */
export async function readText(
  body: AnswerBody,
  limit: number,
  source: string,
  truncate = false,
): Promise<string> {
  return (await readBytes(body, limit, source, { truncate })).toString('utf8');
}

/**
 * Reads a body's bytes (into `reuse`, when given), refusing (or, with `truncate`, cutting) bodies above `limit`
 * bytes.
 */
export async function readBytes(
  body: AnswerBody,
  limit: number,
  source: string,
  { truncate = false, reuse }: { truncate?: boolean; reuse?: ReusedBuffer | undefined } = {},
): Promise<Buffer> {
  const onLonger = () => {
    if (!truncate)
      throw new ProtocolError(`${source}: the answer is larger than ${Math.round(limit / 1024 / 1024)} MiB.`);
  };
  return body.bytes(limit, onLonger, reuse);
}

/**
 * Parses a `Retry-After` header (delay in seconds, or an HTTP date) into milliseconds from `now`; undefined when
 * absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
