/**
 * The service client: the service's three calls and the two object-store transfers, each one request with
 * the retry policy. How answers are read, failures worded and undici loaded lives in `http/`.
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxySettings } from './config.js';
import { type Peer, ProtocolError, ValidationError } from './errors.js';
import { type ApiAnswer, readEnvelope, readText } from './http/envelope.js';
import { apiError, errorCode, objectError, transportError } from './http/failures.js';
import { isRetryable, RETRYABLE_STATUSES, type RetryPolicy, withRetries } from './http/retry.js';
import { createAgent, loadTransport, OBJECT_HIGH_WATER_MARK } from './http/undici.js';
import { displayUrl, encodePath, parseHttpUrl } from './http/urls.js';
import { checkQueryParams, type QueryParams, type QueryRecord } from './query-vocabulary.js';
import { checkQueryRecords, describeValue, snippet } from './records.js';

/** Settings of an `HttpClient`. */
export interface HttpClientOptions {
  /** Service base URL, no trailing slash. */
  url: string;
  /** Sent as `X-api-key` on `GET /upload` only. */
  apiKey?: string | undefined;
  /** Injectable transport (unit tests reach msw handlers through it); default: one keep-alive Agent. */
  dispatcher?: Dispatcher | undefined;
  /** Proxies for the default agent (`Config.proxy`); ignored with an injected dispatcher. */
  proxy?: ProxySettings | undefined;
  /** Attempts per request, retries included; default 4. */
  attempts?: number | undefined;
  /** First backoff delay in ms, doubled on every retry (with jitter); default 250. */
  retryBaseMs?: number | undefined;
  /** Longest wait a `Retry-After` header may ask for, in ms; default 30 000. */
  maxRetryAfterMs?: number | undefined;
  /** Time allowed to open a connection, in ms; default 10 000. */
  connectTimeoutMs?: number | undefined;
  /** Time allowed without any data while waiting for headers or body bytes, in ms; default 30 000. */
  idleTimeoutMs?: number | undefined;
  /** Receives one line per request and per retry (the command line prints them with `--debug`). */
  log?: ((line: string) => void) | undefined;
}

/** The answer of an object GET. */
export interface ObjectResponse {
  /** 200 or 206. */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The caller consumes or destroys it. */
  body: Readable;
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

/** What a PUT to a pre-signed URL sends. */
export interface PutObjectOptions {
  size: number;
  contentMd5?: string | undefined;
  /** Opens the bytes to send; called again for every attempt, so a retry re-reads the file from the start. */
  open: () => Readable;
  signal?: AbortSignal | undefined;
  /** The bytes sent in the current attempt. */
  onBytes?: ((sent: number) => void) | undefined;
}

/** API answers are small JSON documents; anything bigger is not the service. */
const MAX_API_BODY_BYTES = 256 * 1024 * 1024;

/** One request as `#send` makes it. */
interface OutgoingRequest {
  method: 'GET' | 'PUT';
  url: URL;
  peer: Peer;
  headers: Record<string, string>;
  body?: Readable | undefined;
  signal?: AbortSignal | undefined;
  highWaterMark?: number | undefined;
}

/** The client of the service and of the object store behind its pre-signed URLs. */
export class HttpClient {
  /** Service base URL, no trailing slash. */
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #policy: RetryPolicy;
  readonly #connectTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #log: ((line: string) => void) | undefined;
  readonly #injected: Dispatcher | undefined;
  readonly #proxy: ProxySettings | undefined;
  #agent: Promise<Dispatcher> | undefined;
  #closed = false;

  constructor(options: HttpClientOptions) {
    const parsed = parseHttpUrl(options.url);
    if (parsed === 'not a URL') {
      throw new ValidationError([`Invalid service URL ${JSON.stringify(options.url)}: it is not a URL.`]);
    }
    if (parsed === 'not http(s)') {
      throw new ValidationError([
        `Invalid service URL ${JSON.stringify(options.url)}: only http:// and https:// are supported.`,
      ]);
    }
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.#apiKey = options.apiKey || undefined;
    this.#policy = {
      attempts: Math.max(1, Math.floor(options.attempts ?? 4)),
      retryBaseMs: Math.max(0, options.retryBaseMs ?? 250),
      maxRetryAfterMs: Math.max(0, options.maxRetryAfterMs ?? 30_000),
      log: options.log,
    };
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.#log = options.log;
    this.#injected = options.dispatcher;
    this.#proxy = options.proxy;
  }

  /** GET /upload/<key> -> the pre-signed PUT URL. 409 -> ApiError with code 'E_ALREADY_EXISTS'. */
  async presignUpload(key: string, signal?: AbortSignal): Promise<string> {
    const url = this.#apiUrl(`/upload/${encodePath(key, 'upload key')}`);
    // The key authorizes uploads at the service only; it never travels to the object store.
    const headers: Record<string, string> = this.#apiKey ? { 'x-api-key': this.#apiKey } : {};
    const answer = await this.#callApi(url, headers, signal);
    if (answer.status === 409) throw apiError('GET', url, answer, 'E_ALREADY_EXISTS');
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
    const target = typeof answer.body === 'string' ? answer.body.trim() : undefined;
    if (target === undefined) {
      throw new ProtocolError(
        `GET ${url}: expected the pre-signed upload URL, got ${describeValue(answer.body)}.`,
      );
    }
    return checkObjectUrl(target, `GET ${url}`, 'upload');
  }

  /** GET /download/<path> -> the object URL from Location / download_url (not followed here). 404 -> ApiError code 'E_NOT_FOUND'. */
  async resolveDownload(path: string, signal?: AbortSignal): Promise<string> {
    const url = this.#apiUrl(`/download/${encodePath(path, 'download path')}`);
    const answer = await this.#callApi(url, {}, signal);
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
        `GET ${url}: the answer (${answer.status}) names no file URL (no Location header, no download_url); got ${describeValue(body)}.`,
      );
    }
    return checkObjectUrl(location, `GET ${url}`, 'download', url);
  }

  /** GET /query -> checked records. Parameters go by their service names and are checked before sending. */
  async query(params: QueryParams, signal?: AbortSignal): Promise<QueryRecord[]> {
    const query = checkQueryParams(params).toString();
    const url = this.#apiUrl(`/query${query ? `?${query}` : ''}`);
    const answer = await this.#callApi(url, {}, signal);
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
    return checkQueryRecords(answer.body, `GET ${url}`);
  }

  /**
   * GET of a pre-signed object URL, optionally of bytes `start` to `end` (inclusive) only, and only while the
   * object's ETag is `ifMatch` (a 412 otherwise); retried until the headers arrive.
   */
  async getObject(url: string, options: GetObjectOptions = {}): Promise<ObjectResponse> {
    const target = parseObjectUrl(url, 'GET');
    const start = options.start ?? 0;
    const headers: Record<string, string> = {};
    if (start > 0 || options.end !== undefined) headers.range = `bytes=${start}-${options.end ?? ''}`;
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    return this.retry(async () => {
      const response = await this.#send({
        method: 'GET',
        url: target,
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

  /** PUT to a pre-signed URL with Content-Length (and Content-MD5 when given), never an API key. */
  async putObject(url: string, options: PutObjectOptions): Promise<{ etag: string | undefined }> {
    const target = parseObjectUrl(url, 'PUT');
    // Object stores reject chunked PUTs: the length is always declared.
    const headers: Record<string, string> = { 'content-length': String(options.size) };
    if (options.contentMd5) headers['content-md5'] = options.contentMd5;
    return this.retry(async () => {
      const response = await this.#send({
        method: 'PUT',
        url: target,
        peer: 'object store',
        headers,
        body: countBytes(options.open(), options.onBytes),
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
  retry<T>(
    work: (attempt: number) => Promise<T>,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<T> {
    return withRetries(this.#policy, work, options.signal);
  }

  /** True for errors the retry policy retries (network resets, timeouts, 429/502/503/504 ApiErrors). */
  static isRetryable(error: unknown): boolean {
    return isRetryable(error);
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
    this.#agent ??= createAgent({
      connectTimeoutMs: this.#connectTimeoutMs,
      idleTimeoutMs: this.#idleTimeoutMs,
      proxy: this.#proxy,
    });
    return this.#agent;
  }

  #timeouts(): { connectMs: number; idleMs: number } {
    return { connectMs: this.#connectTimeoutMs, idleMs: this.#idleTimeoutMs };
  }

  /** One request, transport errors translated; the caller reads or dumps the body. */
  async #send(outgoing: OutgoingRequest): Promise<Dispatcher.ResponseData> {
    const { method, url, peer, signal } = outgoing;
    const shown = peer === 'service' ? url.href : displayUrl(url);
    const [dispatcher, { request }] = await Promise.all([this.#dispatcher(), loadTransport()]);
    const started = Date.now();
    try {
      const response = await request.call(dispatcher, {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers: outgoing.headers,
        body: outgoing.body ?? null,
        signal,
        headersTimeout: this.#idleTimeoutMs,
        bodyTimeout: this.#idleTimeoutMs,
        ...(outgoing.highWaterMark ? { highWaterMark: outgoing.highWaterMark } : {}),
      });
      this.#log?.(`${method} ${shown} -> ${response.statusCode} (${Date.now() - started} ms)`);
      return response;
    } catch (error) {
      outgoing.body?.destroy();
      this.#log?.(`${method} ${shown} failed (${Date.now() - started} ms): ${errorCode(error) ?? error}`);
      throw transportError({ method, url, error, peer, signal, timeouts: this.#timeouts() });
    }
  }

  /** A GET to the API with retries; answers with retryable statuses are retried, others returned. */
  async #callApi(
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<ApiAnswer> {
    return this.retry(
      async () => {
        const response = await this.#send({ method: 'GET', url, peer: 'service', headers, signal });
        let text: string;
        try {
          text = await readText(response.body, MAX_API_BODY_BYTES, `GET ${url.href}`);
        } catch (error) {
          throw transportError({
            method: 'GET',
            url,
            error,
            peer: 'service',
            signal,
            timeouts: this.#timeouts(),
          });
        }
        const answer = readEnvelope(response.statusCode, response.headers, text, `GET ${url.href}`);
        if (RETRYABLE_STATUSES.has(answer.status)) throw apiError('GET', url, answer);
        return answer;
      },
      { signal },
    );
  }
}

/** Checks a URL the service handed out for an object: only http(s) is ever requested, never with credentials. */
function checkObjectUrl(value: string, source: string, what: 'upload' | 'download', base?: URL): string {
  const url = parseHttpUrl(value, base);
  const shown = JSON.stringify(snippet(value));
  if (url === 'not a URL')
    throw new ProtocolError(`${source}: refusing the ${what} URL ${shown}: it is not a URL.`);
  if (url === 'not http(s)') {
    throw new ProtocolError(
      `${source}: refusing the ${what} URL ${shown}: only http:// and https:// URLs are followed.`,
    );
  }
  if (url.username || url.password) {
    throw new ProtocolError(`${source}: refusing the ${what} URL: it carries credentials in its address.`);
  }
  return url.href;
}

function parseObjectUrl(value: string, method: string): URL {
  const url = parseHttpUrl(value);
  const shown = JSON.stringify(snippet(value));
  if (url === 'not a URL') throw new ProtocolError(`${method} ${shown}: not a URL.`);
  if (url === 'not http(s)')
    throw new ProtocolError(`${method} ${shown}: only http:// and https:// URLs are used.`);
  return url;
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
