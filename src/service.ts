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
import { checkQueryParams, type QueryParams } from './query-vocabulary.js';
import { checkQueryAnswer, describeValue, type ReceivedRecord, snippet } from './records.js';
import {
  credentialHeaders,
  DEFAULT_PAGE_SIZE,
  type DialectChoices,
  freshChoices,
  MAX_PAGE_SIZE,
  prefixedRoutesExist,
  refusesParameter,
  routePrefix,
  type ServiceCredentials,
  type ServiceRoute,
} from './service-dialect.js';

/** Settings of an `HttpClient`. */
export interface HttpClientOptions {
  /** Service base URL, no trailing slash. */
  url: string;
  /** Sent as `X-api-key` on every request to the service (never to the object store); routes go to `/api-key/`. */
  apiKey?: string | undefined;
  /** Sent as `Authorization: Bearer` on every request to the service; routes go to `/authorized/`. */
  token?: string | undefined;
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

/** How `HttpClient.query` asks. */
export interface HttpQueryOptions {
  signal?: AbortSignal | undefined;
  /** Records per page asked of a service that pages (1 to 10,000); default 10,000. */
  pageSize?: number | undefined;
  /** Called once, when the answer holds records of a naming form this version does not check, with their count. */
  onNewerForms?: ((count: number) => void) | undefined;
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
  readonly #credentials: ServiceCredentials;
  /** What this client has learned of the service's dialect; each choice costs at most one extra request. */
  readonly #choices: DialectChoices = freshChoices();
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
    this.#credentials = { apiKey: options.apiKey || undefined, token: options.token || undefined };
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

  /** What this client has learned so far of the service's routes, `latest` form and paging. */
  get dialect(): Readonly<DialectChoices> {
    return { ...this.#choices };
  }

  /**
   * GET /upload/<key> -> the pre-signed PUT URL. 409 (the specification's string or today's
   * `{"error": "FileAlreadyExists", "message": …}`) -> ApiError with code 'E_ALREADY_EXISTS'.
   */
  async presignUpload(key: string, signal?: AbortSignal): Promise<string> {
    const { url, answer } = await this.#callRoute('upload', `/${encodePath(key, 'upload key')}`, signal);
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
    const { url, answer } = await this.#callRoute(
      'download',
      `/${encodePath(path, 'download path')}`,
      signal,
    );
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

  /**
   * GET /query -> checked records, every page of them. Parameters go by their service names and are checked
   * before sending. A service that pages is asked `offset`/`limit` pages until a short one; one that refuses
   * those parameters (a 400 naming one) is asked once without them, and one that ignores them (more records than
   * a page, or the same page twice) has already answered in full. `version: 'latest'` is sent as
   * `version=latest`, or as `latest=true` once the service has refused the first form with a 400 naming it.
   * Records of a naming form this version does not check are kept and counted for `onNewerForms`.
   */
  async query(params: QueryParams, options: HttpQueryOptions | AbortSignal = {}): Promise<ReceivedRecord[]> {
    const {
      signal,
      pageSize = DEFAULT_PAGE_SIZE,
      onNewerForms,
    } = options instanceof AbortSignal ? { signal: options } : options;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new ValidationError([
        `Invalid page size ${pageSize}: give a whole number from 1 to ${MAX_PAGE_SIZE}.`,
      ]);
    }
    const filters = checkQueryParams(params);
    const records: ReceivedRecord[] = [];
    let newerForms = 0;
    let previous: { first: string; last: string } | undefined;
    for (;;) {
      const page = this.#choices.paging === 'no' ? undefined : { offset: records.length, limit: pageSize };
      const { url, answer, paged } = await this.#queryRequest(filters, page, signal);
      if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
      const checked = checkQueryAnswer(answer.body, `GET ${url}`, paged ? records.length : 0);
      const received = checked.records;
      const bounds =
        received.length > 0
          ? { first: received[0]?.file_path ?? '', last: received.at(-1)?.file_path ?? '' }
          : undefined;
      if (paged && (received.length > pageSize || sameBounds(bounds, previous))) {
        if (records.length > 0 && received.length > pageSize) {
          throw new ProtocolError(
            `GET ${url}: asked for at most ${pageSize} records, got ${received.length} after ${records.length} paged ones.`,
          );
        }
        // The service ignores offset and limit: its first answer held every record.
        this.#learn('paging', 'no', `the service ignores offset and limit: one unpaged query per search`);
        if (records.length === 0) {
          records.push(...received);
          newerForms += checked.newerForms;
        }
        break;
      }
      records.push(...received);
      newerForms += checked.newerForms;
      if (!paged || received.length < pageSize) break;
      if (records.length > pageSize && this.#choices.paging === 'unknown') {
        this.#learn('paging', 'yes', 'the service pages query answers');
      }
      previous = bounds;
    }
    if (newerForms > 0) onNewerForms?.(newerForms);
    return records;
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

  /** Notes a choice about the service for the rest of the run, and says so in the request log. */
  #learn<Name extends keyof DialectChoices>(name: Name, value: DialectChoices[Name], why: string): void {
    if (this.#choices[name] === value) return;
    this.#choices[name] = value;
    this.#log?.(`service: ${why}`);
  }

  /**
   * One GET of a route, with the client's credentials: first under the prefix they call for; while it is not
   * known whether the service has prefixed routes, a 404 there is asked once of the plain route, and the pair of
   * answers decides for the rest of the run (see `prefixedRoutesExist`).
   */
  async #callRoute(
    route: ServiceRoute,
    rest: string,
    signal: AbortSignal | undefined,
  ): Promise<{ url: URL; answer: ApiAnswer }> {
    const headers = credentialHeaders(this.#credentials);
    const prefix = routePrefix(route, this.#credentials, this.#choices);
    const url = this.#apiUrl(`${prefix}/${route}${rest}`);
    const answer = await this.#callApi(url, headers, signal);
    if (prefix === '' || this.#choices.prefixedRoutes !== 'unknown') return { url, answer };
    if (answer.status !== 404) {
      this.#learn('prefixedRoutes', 'yes', `the service has ${prefix}/ routes`);
      return { url, answer };
    }
    const plainUrl = this.#apiUrl(`/${route}${rest}`);
    const plain = await this.#callApi(plainUrl, headers, signal);
    if (prefixedRoutesExist(answer, plain)) {
      this.#learn('prefixedRoutes', 'yes', `the service has ${prefix}/ routes`);
      return { url, answer };
    }
    this.#learn('prefixedRoutes', 'no', `the service has no ${prefix}/ routes: plain routes for this run`);
    return { url: plainUrl, answer: plain };
  }

  /**
   * One query request in the forms this run has learned, learning from a 400 that names a parameter: `offset` or
   * `limit` (the service does not page: asked again without them) or `version` (the service wants
   * `latest=true`: asked again in that form). Each lesson is taken once per run.
   */
  async #queryRequest(
    filters: URLSearchParams,
    page: { offset: number; limit: number } | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ url: URL; answer: ApiAnswer; paged: boolean }> {
    let paged = page !== undefined;
    for (;;) {
      const search = new URLSearchParams(filters);
      const latestFlag = search.get('version') === 'latest' && this.#choices.latest === 'latest=true';
      if (latestFlag) {
        search.delete('version');
        search.set('latest', 'true');
      }
      if (paged && page) {
        search.set('offset', String(page.offset));
        search.set('limit', String(page.limit));
      }
      const { url, answer } = await this.#callRoute('query', `?${search}`, signal);
      if (answer.status !== 400) {
        if (filters.get('version') === 'latest' && answer.status >= 200 && answer.status <= 299) {
          this.#learn(
            'latest',
            latestFlag ? 'latest=true' : 'version=latest',
            'latest versions asked as sent',
          );
        }
        return { url, answer, paged };
      }
      if (paged && this.#choices.paging === 'unknown' && refusesParameter(answer, ['offset', 'limit'])) {
        this.#learn('paging', 'no', 'the service refuses offset and limit: one unpaged query per search');
        paged = false;
        continue;
      }
      if (
        filters.get('version') === 'latest' &&
        this.#choices.latest === 'unknown' &&
        refusesParameter(answer, ['version'])
      ) {
        this.#learn('latest', 'latest=true', 'the service refuses version=latest: latest=true for this run');
        continue;
      }
      return { url, answer, paged };
    }
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

/** True when two pages begin and end with the same records: a service that ignores `offset` sent one twice. */
function sameBounds(
  page: { first: string; last: string } | undefined,
  previous: { first: string; last: string } | undefined,
): boolean {
  return (
    page !== undefined &&
    previous !== undefined &&
    page.first === previous.first &&
    page.last === previous.last
  );
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
