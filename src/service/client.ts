import { settledOrAborted } from '../core/batch.js';
import { type RequestSettings, requestSettings } from '../core/call-settings.js';
import { ApiError, NetworkError, ProtocolError, ValidationError } from '../core/errors.js';
import { withRetries } from '../core/failure-policy.js';
import { parseHttpUrl } from '../core/urls.js';
import type { ReusedBuffer } from '../http/body.js';
import { type ApiAnswer, isRecord, messageOf } from '../http/envelope.js';
import { apiError } from '../http/failures.js';
import type { GetObjectOptions, ObjectResponse, PutObjectOptions } from '../http/objects.js';
import { checkObjectUrl, getObjectWith, putObjectWith } from '../http/objects.js';
import { encodePath } from '../http/request-path.js';
import type { MissionFile } from '../naming/names.js';
import type { QueryParams } from '../naming/query-vocabulary.js';
import {
  credentialHeaders,
  type DialectChoices,
  freshChoices,
  prefixedRoutesExist,
  routePrefix,
  type ServiceCredentials,
  type ServiceRoute,
} from './dialect.js';
import { type QueryingService, queryAllPages, queryFilePages, queryPages } from './query.js';
import { describeValue, type ReceivedRecord } from './records.js';
import { ServiceTransport } from './transport.js';
import type { HttpClientOptions, HttpQueryOptions } from './types.js';

/** The error name today's service gives a name held by an upload whose bytes are not confirmed yet. */
export const UPLOAD_IN_PROGRESS = 'UploadInProgress';

/** The words of a reserved name's 409, read only where the service states neither an error name nor Retry-After. */
const NOT_STORED_YET = 'not stored yet';

/**
 * What a 409 of `/upload` says of the name, read from what the service states: today's routes name the error
 * (`UploadInProgress` for a name an unfinished upload holds, `FileAlreadyExists` for a stored file); the
 * specification's answer a string, and only a reserved name's answer carries `Retry-After` (when it is free again).
 */
export function takenNameCode(answer: ApiAnswer): 'E_NAME_RESERVED' | 'E_ALREADY_EXISTS' {
  const stated = isRecord(answer.body) ? answer.body.error : undefined;
  if (typeof stated === 'string')
    return stated === UPLOAD_IN_PROGRESS ? 'E_NAME_RESERVED' : 'E_ALREADY_EXISTS';
  if (answer.headers['retry-after'] !== undefined) return 'E_NAME_RESERVED';
  // Last resort, for a service that states neither (a string 409 without Retry-After, as the specification's
  // "already exists." is): the words the reference server's answers about a reserved name have always carried.
  return messageOf(answer).includes(NOT_STORED_YET) ? 'E_NAME_RESERVED' : 'E_ALREADY_EXISTS';
}

/** The client of the service and of the object store behind its pre-signed URLs. */
export class HttpClient {
  /** Service base URL, no trailing slash. */
  readonly baseUrl: string;
  readonly #credentials: ServiceCredentials;
  /** What this client has learned of the service's dialect; each choice costs at most one extra request. */
  readonly #choices: DialectChoices = freshChoices();
  /** How patiently requests are tried and waited for: the settings resolved once, as given. */
  readonly #requests: RequestSettings;
  readonly #log: ((line: string) => void) | undefined;
  /** How requests travel: connections, timeouts, the request log, the retries of an API GET. */
  readonly #transport: ServiceTransport;
  /** Settles when the request that is learning whether the service has prefixed routes has its answer. */
  #routeLearning: Promise<void> | undefined;

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
    this.#requests = requestSettings(options);
    this.#log = this.#requests.log;
    // One timeout bounds the connection, the first byte and every gap between bytes (`--timeout`).
    this.#transport = new ServiceTransport({
      requests: this.#requests,
      dispatcher: options.dispatcher,
      proxy: options.proxy,
    });
  }

  /** What this client has learned so far of the service's routes, `latest` form and paging. */
  get dialect(): Readonly<DialectChoices> {
    return { ...this.#choices };
  }

  /**
   * GET /upload/<key> -> the pre-signed PUT URL. 409 -> ApiError with code 'E_ALREADY_EXISTS' for a stored
   * file, 'E_NAME_RESERVED' for a name an unfinished upload holds (see `takenNameCode`). With
   * `contentMd5` (base64) the request carries `Content-MD5`: a service that signs it into the URL lets only those
   * bytes in, and the same bytes asked again take back an upload whose answer was lost.
   */
  async presignUpload(key: string, signal?: AbortSignal, once = false, contentMd5?: string): Promise<string> {
    try {
      return await this.#presignUpload(key, signal, once, contentMd5);
    } catch (error) {
      // Labelled by what was asked (`upload <key>`), not by the GET that asks for the URL.
      if (error instanceof ApiError || error instanceof NetworkError)
        error.message = error.message.replace(/^GET \S+: /, `upload ${key}: `);
      throw error;
    }
  }

  async #presignUpload(key: string, signal: AbortSignal | undefined, once: boolean, contentMd5?: string) {
    const { url, answer } = await this.#callRoute('upload', `/${encodePath(key, 'upload key')}`, signal, {
      once,
      headers: contentMd5 ? { 'content-md5': contentMd5 } : undefined,
    });
    if (answer.status === 409)
      throw apiError('GET', url, answer, { code: takenNameCode(answer), route: 'upload' });
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer, { route: 'upload' });
    const target = typeof answer.body === 'string' ? answer.body.trim() : undefined;
    if (target === undefined) {
      throw new ProtocolError(
        `GET ${url}: expected the pre-signed upload URL, got ${describeValue(answer.body)}.`,
      );
    }
    return checkObjectUrl(target, `GET ${url}`, 'upload');
  }

  /**
   * GET /download/<path> -> the object URL from Location / download_url (not followed here). 404 -> ApiError code
   * 'E_NOT_FOUND'. With `once`, a single attempt: the caller is itself an attempt of a transfer (a URL renewed
   * mid-transfer), and retries never nest.
   */
  async resolveDownload(path: string, signal?: AbortSignal, once = false): Promise<string> {
    const { url, answer } = await this.#callRoute(
      'download',
      `/${encodePath(path, 'download path')}`,
      signal,
      {
        once,
      },
    );
    // The path is the layout's, built by this tool or checked against it: a 404 says the archive has no such
    // file, whatever the service's words (today's service tells the caller to include the full path).
    if (answer.status === 404) {
      throw apiError('GET', url, answer, {
        code: 'E_NOT_FOUND',
        meaning: 'the archive holds no such file',
        route: 'download',
      });
    }
    if (answer.status < 200 || answer.status > 399) throw apiError('GET', url, answer, { route: 'download' });
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
   * `version=latest`, or as `latest=true` once the service has refused the first form with a 400 naming it; the
   * newest ancillary versions are chosen by the client from every version. The `spice` table is asked at
   * `/spice-query`, in its parameters (`start_ingest_date`, `end_ingest_date`, `latest=true`). Records of a naming
   * form this version does not check are kept and counted for `onNewerForms`.
   */
  query(params: QueryParams, options: HttpQueryOptions | AbortSignal = {}): Promise<ReceivedRecord[]> {
    return queryAllPages(
      this.#querying(),
      params,
      options instanceof AbortSignal ? { signal: options } : options,
    );
  }

  /**
   * The records of `query`, one page at a time as the service answers them: the next page is asked only when
   * the caller takes it, so nothing here holds more than a page (but for ancillary `version: 'latest'`, chosen
   * from every version at the end). A failure rejects the iteration after the pages already handed over.
   */
  queryPages(params: QueryParams, options: HttpQueryOptions = {}): AsyncGenerator<ReceivedRecord[], void> {
    return queryPages(this.#querying(), params, options);
  }

  /**
   * The mission files of `query`, as the check of each record read its storage path, for callers that take one
   * file after another and keep only what they need of each: a large page comes in parts of a run of records
   * each, parsed and checked as the loop takes them (a part of newer forms only may be empty). A record refused
   * fails the iteration after the parts before it.
   */
  queryFilePages(params: QueryParams, options: HttpQueryOptions = {}): AsyncGenerator<MissionFile[], void> {
    return queryFilePages(this.#querying(), params, options);
  }

  /** What a query asks of this client: its choices, how it learns, one call of a route. */
  #querying(): QueryingService {
    return {
      choices: this.#choices,
      learn: (name, value, why) => this.#learn(name, value, why),
      callRoute: (route, rest, signal, { reuse, scan }) =>
        this.#callRoute(route, rest, signal, { reuse, lazyArrays: scan }),
    };
  }

  /**
   * GET of a pre-signed object URL, optionally of bytes `start` to `end` (inclusive) only, and only while the
   * object's ETag is `ifMatch` (a 412 otherwise). One attempt (redirects followed): the transfer that asks
   * decides about retries, with the failure policy, over its whole transfer.
   */
  getObject(url: string, options: GetObjectOptions = {}): Promise<ObjectResponse> {
    return getObjectWith(this.#transport, url, options);
  }

  /** PUT to a pre-signed URL with Content-Length (and Content-MD5 when given), never an API key; one attempt. */
  putObject(url: string, options: PutObjectOptions): Promise<{ etag: string | undefined }> {
    return putObjectWith(this.#transport, url, options);
  }

  /** Runs `work` with the client's request settings (retries, exponential backoff with jitter). `isRetryable` decides per error. */
  retry<T>(
    work: (attempt: number) => Promise<T>,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<T> {
    return withRetries(this.#requests, work, options.signal);
  }

  /** Closes the connections this client opened (an injected dispatcher stays open: its owner closes it). */
  close(): Promise<void> {
    return this.#transport.close();
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
   * answers decides for the rest of the run (see `prefixedRoutesExist`). `once`: a single attempt; `headers`: more
   * headers; `reuse`: the buffer the answer's bytes are read into, once the routes are known (see `ReusedBuffer`);
   * `lazyArrays`: a large array answer kept as text for its records to be parsed as they are taken.
   */
  async #callRoute(
    route: ServiceRoute,
    rest: string,
    signal: AbortSignal | undefined,
    {
      once = false,
      headers: extraHeaders,
      reuse,
      lazyArrays = false,
    }: {
      once?: boolean;
      headers?: Record<string, string> | undefined;
      reuse?: ReusedBuffer | undefined;
      lazyArrays?: boolean;
    } = {},
  ): Promise<{ url: URL; answer: ApiAnswer }> {
    const headers = { ...credentialHeaders(this.#credentials), ...extraHeaders };
    let prefix = routePrefix(route, this.#credentials, this.#choices);
    // The first request to a service goes alone: the others wait for what it learns instead of each paying
    // for the fallback.
    while (prefix !== '' && this.#choices.prefixedRoutes === 'unknown' && this.#routeLearning) {
      await settledOrAborted(this.#routeLearning, signal);
      prefix = routePrefix(route, this.#credentials, this.#choices);
    }
    if (prefix === '' || this.#choices.prefixedRoutes !== 'unknown') {
      const url = this.#apiUrl(`${prefix}/${route}${rest}`);
      return {
        url,
        answer: await this.#transport.callApi(url, headers, signal, { once, lazyArrays, reuse }),
      };
    }
    let learnt: () => void = () => undefined;
    this.#routeLearning = new Promise<void>((resolve) => {
      learnt = resolve;
    });
    try {
      return await this.#learnRoute(route, rest, prefix, headers, signal, lazyArrays);
    } finally {
      this.#routeLearning = undefined;
      learnt();
    }
  }

  /** A route asked under `prefix`, and of the plain route after a 404 there; the pair decides for the run. */
  async #learnRoute(
    route: ServiceRoute,
    rest: string,
    prefix: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    lazyArrays: boolean,
  ): Promise<{ url: URL; answer: ApiAnswer }> {
    const url = this.#apiUrl(`${prefix}/${route}${rest}`);
    const answer = await this.#transport.callApi(url, headers, signal, { lazyArrays });
    if (answer.status !== 404) {
      this.#learn('prefixedRoutes', 'yes', `the service has ${prefix}/ routes`);
      return { url, answer };
    }
    const plainUrl = this.#apiUrl(`/${route}${rest}`);
    const plain = await this.#transport.callApi(plainUrl, headers, signal, { lazyArrays });
    if (prefixedRoutesExist(answer, plain)) {
      this.#learn('prefixedRoutes', 'yes', `the service has ${prefix}/ routes`);
      return { url, answer };
    }
    this.#learn('prefixedRoutes', 'no', `the service has no ${prefix}/ routes: plain routes for this run`);
    return { url: plainUrl, answer: plain };
  }
}
