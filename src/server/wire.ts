/** How API answers travel: the service's envelope, and the three ways the reference server can put it on the wire. */
import type { ServerResponse } from 'node:http';

/** `envelope`: HTTP body = envelope, HTTP status = statusCode; `envelope-200`: always HTTP 200; `gateway`: unwrapped. */
export type WireMode = 'envelope' | 'envelope-200' | 'gateway';

/** The wire modes, for checking option values. */
export const WIRE_MODES: readonly WireMode[] = ['envelope', 'envelope-200', 'gateway'];

/** JSON encoded ahead of time, in chunks (query records are encoded once, when indexed). */
export class RawJson {
  constructor(readonly chunks: readonly Buffer[]) {}
}

/** The outcome of an API route, as the service's Lambda would return it. */
export interface ApiResponse {
  statusCode: number;
  headers: Record<string, string>;
  /** A message or URL (string), a record or list (object), or pre-serialized JSON. */
  body: string | object | RawJson;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

/** A string message answer, e.g. an error. */
export function messageResponse(statusCode: number, message: string, headers: Record<string, string> = {}) {
  return { statusCode, headers: { 'Content-Type': TEXT, ...headers }, body: message } satisfies ApiResponse;
}

/** Headers the real service sends with every query answer. */
export const QUERY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': JSON_TYPE,
  'Access-Control-Allow-Origin': '*',
};

function bodyChunks(body: ApiResponse['body']): readonly Buffer[] {
  return body instanceof RawJson ? body.chunks : [Buffer.from(JSON.stringify(body), 'utf8')];
}

/**
 * The envelope as JSON, without re-serializing a pre-encoded body. An error's envelope also carries the request's
 * id (`requestId`), so the body a user pastes names the server's log line; readers of the envelope take only
 * its three fields.
 */
export function envelopeChunks(response: ApiResponse, requestId?: string): Buffer[] {
  const head = `{"statusCode":${response.statusCode},"headers":${JSON.stringify(response.headers)},"body":`;
  const tail =
    requestId !== undefined && response.statusCode >= 400
      ? Buffer.from(`,"requestId":${JSON.stringify(requestId)}}`)
      : CLOSE_BRACE;
  return [Buffer.from(head, 'utf8'), ...bodyChunks(response.body), tail];
}

const CLOSE_BRACE = Buffer.from('}');

/**
 * The HTTP body of the unwrapped (gateway) form. Lists and records are JSON; a string is JSON-encoded
 * when the envelope declares JSON (the upload URL, query messages: the real Lambda `json.dumps` them) and
 * plain text otherwise.
 */
function gatewayChunks(response: ApiResponse): readonly Buffer[] {
  if (typeof response.body !== 'string') return bodyChunks(response.body);
  const type = headerValue(response.headers, 'content-type') ?? '';
  const text = type.startsWith(JSON_TYPE) ? JSON.stringify(response.body) : response.body;
  return [Buffer.from(text, 'utf8')];
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * Envelope headers that keep their HTTP meaning when the envelope is the HTTP body (`curl -L` follows the 302;
 * a 401 without `WWW-Authenticate` breaks HTTP's rule for it).
 */
const PASSED_THROUGH = [
  'location',
  'allow',
  'access-control-allow-origin',
  'www-authenticate',
  'retry-after',
];

/** Writes an API answer in the given wire mode. `head` sends the headers only. */
export function sendApiResponse(
  res: ServerResponse,
  response: ApiResponse,
  mode: WireMode,
  head = false,
): void {
  let status: number;
  let chunks: readonly Buffer[];
  const headers: Record<string, string> = {};
  if (mode === 'gateway') {
    status = response.statusCode;
    chunks = gatewayChunks(response);
    Object.assign(headers, response.headers);
    if (headerValue(headers, 'content-type') === undefined) {
      headers['Content-Type'] = typeof response.body === 'string' ? TEXT : JSON_TYPE;
    }
  } else {
    status = mode === 'envelope' ? response.statusCode : 200;
    const requestId = res.getHeader('x-request-id');
    chunks = envelopeChunks(response, typeof requestId === 'string' ? requestId : undefined);
    for (const [key, value] of Object.entries(response.headers)) {
      const lower = key.toLowerCase();
      if (
        lower === 'access-control-allow-origin' ||
        (mode === 'envelope' && PASSED_THROUGH.includes(lower))
      ) {
        headers[key] = value;
      }
    }
    headers['Content-Type'] = JSON_TYPE;
  }
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  headers['Content-Length'] = String(bytes.length);
  res.writeHead(status, headers);
  res.end(head ? undefined : bytes);
}
