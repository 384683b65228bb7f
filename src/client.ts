/**
 * The one HTTP client of the service: reads its envelope tolerantly, retries what is worth retrying and streams
 * object transfers. undici is loaded on the first request so that `--help` never pays for it.
 */
import { STATUS_CODES } from 'node:http';
import { pipeline, type Readable, Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  AbortedError,
  ApiError,
  LocalFileError,
  MissionDataError,
  NetworkError,
  ProtocolError,
  ValidationError,
} from './errors.js';
import {
  isQueryParameter,
  type QueryParameter,
  queryValueProblem,
  unknownQueryParameterMessage,
  unsafePathReason,
} from './naming.js';
import { checkQueryRecords, describeValue, type QueryRecord, snippet } from './records.js';

export type { QueryRecord } from './records.js';

/** Settings of an `HttpClient`. */
export interface HttpClientOptions {
  /** Service base URL, no trailing slash. */
  url: string;
  /** Sent as `X-api-key` on `GET /upload` only. */
  apiKey?: string | undefined;
  /** Injectable transport (unit tests reach msw handlers through it); default: one keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** Attempts per request, retries included; default 4. */
  attempts?: number;
  /** First backoff delay in ms, doubled on every retry (with jitter); default 250. */
  retryBaseMs?: number;
  /** Longest wait a `Retry-After` header may ask for, in ms; default 30 000. */
  maxRetryAfterMs?: number;
  /** Time allowed to open a connection, in ms; default 10 000. */
  connectTimeoutMs?: number;
  /** Time allowed without any data while waiting for headers or body bytes, in ms; default 30 000. */
  idleTimeoutMs?: number;
  /** Receives one line per request and per retry (the command line prints them with `--debug`). */
  log?: ((line: string) => void) | undefined;
}

/** Query parameters, by their service names. */
export type QueryParams = Partial<Record<QueryParameter, string>>;

/** The answer of an object GET. */
export interface ObjectResponse {
  /** 200 or 206. */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The caller consumes or destroys it. */
  body: Readable;
}

/** An API answer after the envelope has been read: the outcome, whichever wire form carried it. */
export interface ApiAnswer {
  status: number;
  /** Header names in lower case; the envelope's headers win over the HTTP ones. */
  headers: Record<string, string>;
  /** Parsed JSON when the body was JSON (or a JSON-encoded string), the text otherwise. */
  body: unknown;
}

/** The two parts of undici the client uses: its connection pool, and `request` (called on any dispatcher). */
interface Transport {
  Agent: typeof import('undici').Agent;
  request: typeof import('undici/lib/api/api-request.js').default;
}

/** Who is at the other end of a request: the service (its URL is configuration) or the object store (its URLs come from the service). */
type Peer = 'service' | 'object store';
let transport: Promise<Transport> | undefined;

/** Statuses worth asking again: rate limiting and gateway trouble. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);
/** Transport failures worth retrying: the connection broke or went quiet. */
const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const LOCAL_FILE_CODES = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'EMFILE', 'ENFILE', 'EIO']);
/** API answers are small JSON documents; anything bigger is not the service. */
const MAX_API_BODY_BYTES = 256 * 1024 * 1024;
/** Error bodies of object routes are short texts; read no more than this of them. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;
/** Larger stream buffers roughly double file throughput over Node's 16/64 KiB defaults. */
const OBJECT_HIGH_WATER_MARK = 1024 * 1024;
/** Longest backoff between two attempts, whatever the attempt number. */
const MAX_BACKOFF_MS = 10_000;

/** Retry-After values remembered per error, so `retry` can honour them. */
const retryAfterMs = new WeakMap<object, number>();

/** The HTTP client of the service. */
export class HttpClient {
  /** Service base URL, no trailing slash. */
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #attempts: number;
  readonly #retryBaseMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #connectTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #log: ((line: string) => void) | undefined;
  readonly #injected: Dispatcher | undefined;
  #agent: Promise<Dispatcher> | undefined;
  #closed = false;

  constructor(options: HttpClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new ValidationError([`Invalid service URL ${JSON.stringify(options.url)}: it is not a URL.`]);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ValidationError([
        `Invalid service URL ${JSON.stringify(options.url)}: only http:// and https:// are supported.`,
      ]);
    }
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.#apiKey = options.apiKey || undefined;
    this.#attempts = Math.max(1, Math.floor(options.attempts ?? 4));
    this.#retryBaseMs = Math.max(0, options.retryBaseMs ?? 250);
    this.#maxRetryAfterMs = Math.max(0, options.maxRetryAfterMs ?? 30_000);
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.#log = options.log;
    this.#injected = options.dispatcher;
  }

  /** GET /upload/<key> -> the pre-signed PUT URL. 409 -> ApiError with code 'E_ALREADY_EXISTS'. */
  async presignUpload(key: string, signal?: AbortSignal): Promise<string> {
    const url = this.#apiUrl(`/upload/${encodePath(key, 'upload key')}`);
    const headers: Record<string, string> = {};
    // The key authorizes uploads at the service only; it never travels to the object store.
    if (this.#apiKey) headers['x-api-key'] = this.#apiKey;
    const answer = await this.#callApi(url, headers, signal);
    const source = `GET ${url}`;
    if (answer.status === 409) throw apiError('GET', url, answer, 'E_ALREADY_EXISTS');
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
    const target = typeof answer.body === 'string' ? answer.body.trim() : undefined;
    if (target === undefined) {
      throw new ProtocolError(
        `${source}: expected the pre-signed upload URL, got ${describeValue(answer.body)}.`,
      );
    }
    return checkObjectUrl(target, source, 'upload');
  }

  /** GET /download/<path> -> the object URL from Location / download_url (not followed here). 404 -> ApiError code 'E_NOT_FOUND'. */
  async resolveDownload(path: string, signal?: AbortSignal): Promise<string> {
    const url = this.#apiUrl(`/download/${encodePath(path, 'download path')}`);
    const answer = await this.#callApi(url, {}, signal);
    const source = `GET ${url}`;
    if (answer.status === 404) throw apiError('GET', url, answer, 'E_NOT_FOUND');
    if (answer.status < 200 || answer.status > 399) throw apiError('GET', url, answer);
    const body = answer.body;
    const fromBody =
      body !== null && typeof body === 'object' && !Array.isArray(body)
        ? (body as Record<string, unknown>).download_url
        : undefined;
    const location = answer.headers.location ?? (typeof fromBody === 'string' ? fromBody : undefined);
    if (location === undefined) {
      throw new ProtocolError(
        `${source}: the answer (${answer.status}) names no file URL (no Location header, no download_url); got ${describeValue(body)}.`,
      );
    }
    return checkObjectUrl(location, source, 'download', url);
  }

  /** GET /query -> checked records. */
  async query(params: QueryParams, signal?: AbortSignal): Promise<QueryRecord[]> {
    const search = new URLSearchParams();
    const problems: string[] = [];
    const table = params.table === 'ancillary' ? 'ancillary' : 'science';
    for (const [name, value] of Object.entries(params)) {
      if (value === undefined) continue;
      if (!isQueryParameter(name)) {
        problems.push(unknownQueryParameterMessage(name));
        continue;
      }
      const problem = queryValueProblem(name, value, table);
      if (problem) problems.push(problem);
      search.set(name, value);
    }
    if (problems.length > 0) throw new ValidationError(problems);
    const query = search.toString();
    const url = this.#apiUrl(`/query${query ? `?${query}` : ''}`);
    const answer = await this.#callApi(url, {}, signal);
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
    return checkQueryRecords(answer.body, `GET ${url}`);
  }

  /** GET of a pre-signed object URL, optionally from byte `start` (Range); retried until the headers arrive. */
  async getObject(
    url: string,
    options: { start?: number; signal?: AbortSignal } = {},
  ): Promise<ObjectResponse> {
    const target = parseObjectUrl(url, 'GET');
    const start = options.start ?? 0;
    const headers: Record<string, string> = {};
    if (start > 0) headers.range = `bytes=${start}-`;
    return this.retry(async () => {
      const response = await this.#send('GET', target, {
        shown: displayUrl(target),
        peer: 'object store',
        headers,
        signal: options.signal,
        highWaterMark: OBJECT_HIGH_WATER_MARK,
      });
      if (response.statusCode === 200 || response.statusCode === 206) {
        return { status: response.statusCode, headers: response.headers, body: response.body };
      }
      throw await objectError('GET', target, response, options.signal);
    }, options);
  }

  /**
   * PUT to a pre-signed URL with Content-Length (and Content-MD5 when given), never an API key; `open()` is
   * called again for every attempt so a retry re-reads the file from the start. `onBytes` reports the bytes
   * sent in the current attempt.
   */
  async putObject(
    url: string,
    options: {
      size: number;
      contentMd5?: string;
      open: () => Readable;
      signal?: AbortSignal;
      onBytes?: (sent: number) => void;
    },
  ): Promise<{ etag: string | undefined }> {
    const target = parseObjectUrl(url, 'PUT');
    // Object stores reject chunked PUTs: the length is always declared.
    const headers: Record<string, string> = { 'content-length': String(options.size) };
    if (options.contentMd5) headers['content-md5'] = options.contentMd5;
    return this.retry(async () => {
      const body = countBytes(options.open(), options.onBytes);
      const response = await this.#send('PUT', target, {
        shown: displayUrl(target),
        peer: 'object store',
        headers,
        body,
        signal: options.signal,
      });
      if (response.statusCode >= 200 && response.statusCode <= 299) {
        await response.body.dump().catch(() => undefined);
        const etag = response.headers.etag;
        return { etag: Array.isArray(etag) ? etag[0] : etag };
      }
      throw await objectError('PUT', target, response, options.signal);
    }, options);
  }

  /** Runs `work` with the client's retry policy (exponential backoff with jitter). `isRetryable` decides per error. */
  async retry<T>(work: (attempt: number) => Promise<T>, options: { signal?: AbortSignal } = {}): Promise<T> {
    const { signal } = options;
    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
      try {
        return await work(attempt);
      } catch (error) {
        if (signal?.aborted && !(error instanceof AbortedError)) {
          throw new AbortedError(undefined, { cause: signal.reason });
        }
        if (!HttpClient.isRetryable(error)) throw error;
        if (attempt >= this.#attempts) {
          if (this.#attempts > 1 && error instanceof Error) {
            error.message += ` (gave up after ${this.#attempts} attempts)`;
          }
          throw error;
        }
        const delay = this.#backoff(attempt, error);
        this.#log?.(
          `retry ${attempt + 1}/${this.#attempts} in ${delay} ms: ${error instanceof Error ? error.message : String(error)}`,
        );
        await sleep(delay, signal);
      }
    }
  }

  /** True for errors the retry policy retries (network resets, timeouts, 429/502/503/504 ApiErrors). */
  static isRetryable(error: unknown): boolean {
    if (error instanceof AbortedError) return false;
    if (error instanceof ApiError) return RETRYABLE_STATUSES.has(error.status);
    if (error instanceof NetworkError) {
      if (error.code === 'E_TIMEOUT') return true;
      const code = errorCode(error.cause);
      return error.code === 'E_NETWORK' && code !== undefined && RETRYABLE_CODES.has(code);
    }
    if (error instanceof MissionDataError) return false;
    const code = errorCode(error);
    return code !== undefined && RETRYABLE_CODES.has(code);
  }

  /** Closes the connections this client opened (an injected dispatcher stays open: its owner closes it). */
  async close(): Promise<void> {
    this.#closed = true;
    const agent = this.#agent;
    this.#agent = undefined;
    if (agent) await (await agent).close();
  }

  #apiUrl(pathAndQuery: string): URL {
    return new URL(`${this.baseUrl}${pathAndQuery}`);
  }

  #dispatcher(): Promise<Dispatcher> {
    if (this.#injected) return Promise.resolve(this.#injected);
    if (this.#closed) return Promise.reject(new Error('This client is closed.'));
    this.#agent ??= loadTransport().then(
      ({ Agent }) =>
        new Agent({
          connect: { timeout: this.#connectTimeoutMs },
          headersTimeout: this.#idleTimeoutMs,
          bodyTimeout: this.#idleTimeoutMs,
          keepAliveTimeout: 10_000,
          keepAliveMaxTimeout: 60_000,
          // Object GETs are long streams: pipelining would queue one file behind another, so each request
          // gets its own connection, up to the highest --concurrency the command line accepts.
          pipelining: 1,
          connections: 64,
        }),
    );
    return this.#agent;
  }

  /** One request, transport errors translated; the caller reads or dumps the body. */
  async #send(
    method: 'GET' | 'PUT',
    url: URL,
    options: {
      headers: Record<string, string>;
      body?: Readable;
      signal?: AbortSignal | undefined;
      highWaterMark?: number;
      /** The URL as messages show it. */
      shown: string;
      /** Whose address this is: the service's (from configuration) or the object store's (from the service). */
      peer: Peer;
    },
  ): Promise<Dispatcher.ResponseData> {
    const shown = options.shown;
    const [dispatcher, { request }] = await Promise.all([this.#dispatcher(), loadTransport()]);
    const started = Date.now();
    try {
      const response = await request.call(dispatcher, {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers: options.headers,
        body: options.body ?? null,
        signal: options.signal,
        headersTimeout: this.#idleTimeoutMs,
        bodyTimeout: this.#idleTimeoutMs,
        ...(options.highWaterMark ? { highWaterMark: options.highWaterMark } : {}),
      });
      this.#log?.(`${method} ${shown} -> ${response.statusCode} (${Date.now() - started} ms)`);
      return response;
    } catch (error) {
      options.body?.destroy();
      this.#log?.(`${method} ${shown} failed (${Date.now() - started} ms): ${errorCode(error) ?? error}`);
      throw transportError(method, shown, error, options.signal, this.#timeouts(), options.peer);
    }
  }

  /** A GET to the API with retries; answers with retryable statuses are retried, others returned. */
  async #callApi(
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<ApiAnswer> {
    // API URLs carry only the caller's own filters: messages show them whole.
    const shown = url.href;
    return this.retry(
      async () => {
        const response = await this.#send('GET', url, { shown, headers, signal, peer: 'service' });
        let text: string;
        try {
          text = await readText(response.body, MAX_API_BODY_BYTES, `GET ${shown}`);
        } catch (error) {
          throw transportError('GET', shown, error, signal, this.#timeouts());
        }
        const answer = readEnvelope(response.statusCode, response.headers, text, `GET ${shown}`);
        if (RETRYABLE_STATUSES.has(answer.status)) {
          const error = apiError('GET', url, answer);
          const wait = parseRetryAfter(answer.headers['retry-after']);
          if (wait !== undefined) retryAfterMs.set(error, wait);
          throw error;
        }
        return answer;
      },
      signal ? { signal } : {},
    );
  }

  #backoff(attempt: number, error: unknown): number {
    const asked = typeof error === 'object' && error !== null ? retryAfterMs.get(error) : undefined;
    if (asked !== undefined) return Math.min(asked, this.#maxRetryAfterMs);
    // Exponential backoff with "equal jitter": half fixed, half random, so clients that failed together
    // do not come back together.
    const ceiling = Math.min(this.#retryBaseMs * 2 ** (attempt - 1), MAX_BACKOFF_MS);
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }

  #timeouts(): { connectMs: number; idleMs: number } {
    return { connectMs: this.#connectTimeoutMs, idleMs: this.#idleTimeoutMs };
  }
}

function loadTransport(): Promise<Transport> {
  // These two modules alone: undici's index also loads fetch, WebSocket, caches and mocks, which would double
  // what every command pays for undici at start-up. undici publishes no exports map, so its files are public;
  // should another undici 7 release move them, the whole of undici serves instead.
  transport ??= Promise.all([
    import('undici/lib/dispatcher/agent.js'),
    import('undici/lib/api/api-request.js'),
  ]).then(
    ([agent, api]) => ({ Agent: agent.default, request: api.default }),
    async () => {
      // `default` is undici's module.exports, as Node and bundlers both present CommonJS.
      const { Agent } = (await import('undici')).default;
      return {
        Agent,
        request(this: Dispatcher, options: Dispatcher.RequestOptions) {
          return this.request(options);
        },
      };
    },
  );
  return transport;
}

/**
 * Reads the outcome of an API answer, whichever wire form carried it (DESIGN.md section 2): an HTTP body that is
 * a JSON object with a numeric `statusCode` is the envelope and its fields are the outcome (its `body` a string,
 * a JSON-encoded string, an object or an array); anything else is an unwrapped gateway answer.
 */
export function readEnvelope(
  httpStatus: number,
  httpHeaders: Record<string, string | string[] | undefined>,
  text: string,
  source: string,
): ApiAnswer {
  const headers = lowerCaseHeaders(httpHeaders);
  let parsed: unknown;
  let isJson = false;
  if (text.trim() !== '') {
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
    const envelopeHeaders = isRecord(parsed.headers) ? lowerCaseHeaders(parsed.headers) : {};
    return { status, headers: { ...headers, ...envelopeHeaders }, body: decodeBody(parsed.body) };
  }
  return { status: httpStatus, headers, body: isJson ? parsed : text };
}

/** An envelope body: a string that holds JSON (the service's Lambda `json.dumps` its bodies) is decoded. */
function decodeBody(body: unknown): unknown {
  if (body === undefined || body === null) return '';
  if (typeof body !== 'string') return body;
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('"')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return body;
    }
  }
  return body;
}

function lowerCaseHeaders(headers: Record<string, unknown>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value === 'string') result[key.toLowerCase()] = value;
    else if (Array.isArray(value)) result[key.toLowerCase()] = value.map(String).join(', ');
    else if (typeof value === 'number') result[key.toLowerCase()] = String(value);
  }
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message an answer's body carries, for error messages. */
function messageOf(answer: ApiAnswer): string {
  const body = answer.body;
  let message: string | undefined;
  if (typeof body === 'string') message = markupText(body, answer.status);
  else if (isRecord(body)) {
    const field = body.message ?? body.error ?? body.Message;
    message = typeof field === 'string' ? field : JSON.stringify(body);
  } else if (body !== undefined) message = JSON.stringify(body);
  if (!message) message = STATUS_CODES[answer.status] ?? 'Unknown status';
  return snippet(message, 500);
}

/** The ApiError of an unsuccessful API answer, with a hint where one helps. */
function apiError(method: string, url: URL, answer: ApiAnswer, code?: string): ApiError {
  return new ApiError(
    { method, url: url.href, status: answer.status, message: messageOf(answer) },
    { code: code ?? (answer.status === 404 ? 'E_NOT_FOUND' : 'E_API'), hint: statusHint(answer.status, url) },
  );
}

function statusHint(status: number, url: URL): string | undefined {
  if (status === 502) return 'The service may be temporarily down; try again in a few minutes.';
  if (status === 503 || status === 504) return 'The service is busy or temporarily down; try again later.';
  if (status === 429) return 'The service is limiting requests; wait a little and try again.';
  if ((status === 401 || status === 403) && url.pathname.includes('/upload/')) {
    return 'Uploads need a valid API key: pass --api-key, set MISSION_API_KEY, or run `mission-data config set api-key <key>`.';
  }
  if (status === 403 && url.search.length > 0)
    return 'The pre-signed URL may have expired; run the command again.';
  return undefined;
}

/** The error of an unsuccessful object-store answer (a short plain-text body). */
async function objectError(
  method: string,
  url: URL,
  response: Dispatcher.ResponseData,
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
  const message = snippet(markupText(text, status), 500) || STATUS_CODES[status] || 'Unknown status';
  const error = new ApiError(
    { method, url: shown, status, message },
    { code: status === 404 ? 'E_NOT_FOUND' : 'E_API', hint: statusHint(status, url) },
  );
  const wait = parseRetryAfter(headerText(response.headers['retry-after']));
  if (wait !== undefined) retryAfterMs.set(error, wait);
  return error;
}

/**
 * The readable part of an error body. Gateways and proxies answer with HTML pages and object stores with XML
 * documents: the page title (or text) and the store's `<Code>`/`<Message>` say what the markup buries.
 */
export function markupText(text: string, status: number): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('<')) return trimmed;
  const element = (name: string) =>
    new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`, 'i').exec(trimmed)?.[1]?.trim() || undefined;
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
  return readable.replace(new RegExp(`^${status}\\b\\s*`), '') || (STATUS_CODES[status] ?? '');
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads a body as UTF-8 text, refusing (or, with `truncate`, cutting) bodies above `limit` bytes. */
async function readText(body: Readable, limit: number, source: string, truncate = false): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit) {
      body.destroy();
      if (truncate) break;
      throw new ProtocolError(`${source}: the answer is larger than ${Math.round(limit / 1024 / 1024)} MiB.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Checks a URL the service handed out for an object: only http(s) is ever requested. */
function checkObjectUrl(value: string, source: string, what: 'upload' | 'download', base?: URL): string {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    throw new ProtocolError(
      `${source}: refusing the ${what} URL ${JSON.stringify(snippet(value))}: it is not a URL.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProtocolError(
      `${source}: refusing the ${what} URL ${JSON.stringify(snippet(value))}: only http:// and https:// URLs are followed.`,
    );
  }
  if (url.username || url.password) {
    throw new ProtocolError(`${source}: refusing the ${what} URL: it carries credentials in its address.`);
  }
  return url.href;
}

function parseObjectUrl(value: string, method: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ProtocolError(`${method} ${JSON.stringify(snippet(value))}: not a URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProtocolError(
      `${method} ${JSON.stringify(snippet(value))}: only http:// and https:// URLs are used.`,
    );
  }
  return url;
}

/** An object URL as messages show it: the query string of a pre-signed URL is a credential, so it is left out. */
export function displayUrl(url: URL): string {
  return url.search ? `${url.origin}${url.pathname}?…` : url.href;
}

/** Encodes a storage path for a request path; unsafe paths are refused before anything is sent. */
function encodePath(path: string, what: string): string {
  const reason = unsafePathReason(path);
  if (reason) throw new ValidationError([`Invalid ${what} ${JSON.stringify(path)}: ${reason}.`]);
  return path.split('/').map(encodeURIComponent).join('/');
}

/** A readable that reports how many bytes went through it. */
function countBytes(source: Readable, onBytes: ((sent: number) => void) | undefined): Readable {
  if (!onBytes) return source;
  let sent = 0;
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

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError(undefined, { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(undefined, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The `code` of an error, looking through `cause` and aggregated errors (happy-eyeballs connects). */
function errorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string' && own !== 'ERR_SOCKET_CONNECTION_TIMEOUT') return own;
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested)) {
    for (const inner of nested) {
      const code = errorCode(inner, depth + 1);
      if (code) return code;
    }
  }
  return (
    errorCode((error as { cause?: unknown }).cause, depth + 1) ?? (typeof own === 'string' ? own : undefined)
  );
}

/**
 * Translates a transport failure into the error classes of this package: method, URL and outcome in the
 * message, and what to do about it in the hint.
 */
export function transportError(
  method: string,
  shown: string,
  error: unknown,
  signal?: AbortSignal,
  timeouts: { connectMs: number; idleMs: number } = { connectMs: 10_000, idleMs: 30_000 },
  peer: Peer = 'service',
): Error {
  if (signal?.aborted) return new AbortedError(undefined, { cause: signal.reason });
  if (error instanceof MissionDataError) return error;
  const code = errorCode(error);
  // OpenSSL messages run over several lines; one line reads better under "Error:".
  const detail = snippet(error instanceof Error ? error.message : String(error), 300);
  const where = `${method} ${shown}`;
  const host = safeHost(shown);
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const unreachableHint =
    peer === 'service'
      ? (question: string) =>
          `${question} This is the service URL in use; change it with --url, the MISSION_DATA_ACCESS_URL environment variable, or \`mission-data config set url <url>\`.`
      : // The service handed out this address: changing the configured URL cannot fix it.
        () =>
          `The service sent this address of its object store (${originOf(shown)}), which cannot be reached; the store may be down or the service misconfigured. Try again later.`;
  switch (code) {
    case 'ECONNREFUSED':
      return new NetworkError(`${where}: connection refused (nothing is listening at ${host}).`, {
        code: 'E_CONNECTION_REFUSED',
        cause: error,
        hint: unreachableHint(`Is the service running at ${originOf(shown)}?`),
      });
    case 'ENOTFOUND':
      return new NetworkError(`${where}: the host ${host} was not found.`, {
        code: 'E_HOST_NOT_FOUND',
        cause: error,
        hint: unreachableHint(`Check the service URL in use (${originOf(shown)}).`),
      });
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return new NetworkError(
        `${where}: could not connect to ${host} within ${seconds(timeouts.connectMs)}.`,
        {
          code: 'E_TIMEOUT',
          cause: error,
          hint: 'Check the network connection, a VPN or proxy, and the service URL.',
        },
      );
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new NetworkError(`${where}: no answer within ${seconds(timeouts.idleMs)}.`, {
        code: 'E_TIMEOUT',
        cause: error,
        hint: 'The service may be overloaded; try again later.',
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new NetworkError(`${where}: the answer stalled (no data for ${seconds(timeouts.idleMs)}).`, {
        code: 'E_TIMEOUT',
        cause: error,
      });
    case 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH':
      return new LocalFileError(`${where}: the file's size changed while it was being sent.`, {
        cause: error,
      });
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
    case 'ERR_SSL_PACKET_LENGTH_TOO_LONG':
    case 'ERR_SSL_HTTP_REQUEST':
      return new NetworkError(`${where}: the TLS handshake with ${host} failed (${code}).`, {
        code: 'E_TLS',
        cause: error,
        hint:
          peer === 'service'
            ? `The server at ${originOf(shown)} does not seem to speak https; if it is a plain http server, use an http:// URL (--url, MISSION_DATA_ACCESS_URL or \`mission-data config set url <url>\`).`
            : undefined,
      });
    default:
      break;
  }
  if (code && CERTIFICATE_CODES.has(code)) {
    return new NetworkError(
      `${where}: the server's certificate could not be verified (${code}: ${detail}).`,
      {
        code: 'E_CERTIFICATE',
        cause: error,
        hint: "The local system's root certificates were not found, or do not include this server's issuer. If your site uses its own certificate authority, set NODE_EXTRA_CA_CERTS to the path of its PEM bundle and run again.",
      },
    );
  }
  if (code && LOCAL_FILE_CODES.has(code)) {
    return new LocalFileError(`${where}: cannot read the local file: ${detail}`, { cause: error });
  }
  if (code && RETRYABLE_CODES.has(code)) {
    return new NetworkError(`${where}: the connection was closed or reset (${code}).`, {
      code: 'E_NETWORK',
      cause: error,
    });
  }
  return new NetworkError(`${where}: ${detail}${code ? ` (${code})` : ''}`, {
    code: 'E_NETWORK',
    cause: error,
  });
}

function safeHost(shown: string): string {
  try {
    return new URL(shown.replace(/\?…$/, '')).host;
  } catch {
    return shown;
  }
}

function originOf(shown: string): string {
  try {
    return new URL(shown.replace(/\?…$/, '')).origin;
  } catch {
    return shown;
  }
}
