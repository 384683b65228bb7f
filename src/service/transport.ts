/**
 * How the service client's requests travel: one connection pool (made on first use, or the dispatcher a caller
 * injected), one timeout for the connection, the first byte and every gap between bytes, the request log, and an
 * API GET read whole and asked again as the failure policy says. What the routes mean is `client.ts`'s business.
 */
import type { Dispatcher } from 'undici';
import { errorCode, isRetryable, withRetries } from '../core/failure-policy.js';
import type { ProxySettings } from '../core/proxy.js';
import type { RequestSettings } from '../core/settings.js';
import { displayUrl } from '../core/urls.js';
import { readableBody, type SentAnswer } from '../http/body.js';
import { type ApiAnswer, readEnvelope, readText } from '../http/envelope.js';
import { apiError, requestIdOf } from '../http/failures.js';
import { countBytes, type ObjectTransport, type OutgoingRequest } from '../http/objects.js';
import { transportError } from '../http/transport-failures.js';
import { createAgent, loadTransport } from '../http/undici.js';
import { WireClient } from '../http/wire/pool.js';

/** API answers are small JSON documents; anything bigger is not the service. */
const MAX_API_BODY_BYTES = 256 * 1024 * 1024;

/** What a transport is made with. */
export interface TransportOptions {
  /** How patiently requests are tried and waited for, and where their log lines go. */
  requests: RequestSettings;
  /** A dispatcher the caller owns (tests, a shared pool): used as it is, and never closed here. */
  dispatcher: Dispatcher | undefined;
  proxy: ProxySettings | undefined;
}

/**
 * Requests to the service and to the object store behind its pre-signed URLs. They go over the wire client's
 * own connections (`http/wire/`: a socket reading into one buffer, no stream between it and the file), except
 * where undici does what the wire client does not: through a proxy, on a dispatcher the caller injected, and for
 * a PUT whose bytes come only as a stream.
 */
export class ServiceTransport implements ObjectTransport {
  readonly #options: TransportOptions;
  #agent: Promise<Dispatcher> | undefined;
  #wire: WireClient | undefined;
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
  }

  /** Closes the connections this transport opened (an injected dispatcher stays open: its owner closes it). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#wire) {
      const { connections, requests, reused } = this.#wire.stats;
      if (requests > 0) {
        this.#options.requests.log?.(
          `connections: ${requests} requests over ${connections} connections (${reused} on a kept-alive one)`,
        );
      }
      this.#wire.close();
    }
    const agent = this.#agent;
    this.#agent = undefined;
    if (agent) await (await agent).close();
  }

  #dispatcher(): Promise<Dispatcher> {
    if (this.#options.dispatcher) return Promise.resolve(this.#options.dispatcher);
    if (this.#closed) return Promise.reject(new Error('This client is closed.'));
    this.#agent ??= createAgent({ timeoutMs: this.#options.requests.timeoutMs, proxy: this.#options.proxy });
    return this.#agent;
  }

  /** The wire client, when it may carry requests here: no proxy in force and no dispatcher injected. */
  #wireClient(): WireClient | undefined {
    const proxy = this.#options.proxy;
    if (this.#options.dispatcher || proxy?.http || proxy?.https || this.#closed) return undefined;
    this.#wire ??= new WireClient({ timeoutMs: this.#options.requests.timeoutMs });
    return this.#wire;
  }

  /** One request, transport errors translated; the caller reads or dumps the body. */
  async send(outgoing: OutgoingRequest): Promise<SentAnswer> {
    const { method, url, peer, signal, upload } = outgoing;
    const shown = peer === 'service' ? url.href : displayUrl(url);
    const started = Date.now();
    try {
      const wire = upload === undefined || upload.read !== undefined ? this.#wireClient() : undefined;
      let answer: SentAnswer;
      if (wire) {
        answer = await wire.request({
          method,
          url,
          headers: outgoing.headers,
          upload: upload?.read ? { ...upload, read: upload.read } : undefined,
          signal,
        });
      } else {
        const [dispatcher, { request }] = await Promise.all([this.#dispatcher(), loadTransport()]);
        const response = await request.call(dispatcher, {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method,
          headers: outgoing.headers,
          body: upload ? countBytes(upload.open(), upload.onBytes) : null,
          signal,
          headersTimeout: this.#options.requests.timeoutMs,
          bodyTimeout: this.#options.requests.timeoutMs,
          ...(outgoing.highWaterMark ? { highWaterMark: outgoing.highWaterMark } : {}),
        });
        answer = {
          statusCode: response.statusCode,
          headers: response.headers,
          body: readableBody(response.body),
        };
      }
      const id = requestIdOf(answer.headers['x-request-id']);
      this.#options.requests.log?.(
        `${method} ${shown} -> ${answer.statusCode} (${Date.now() - started} ms${id ? `, request id ${id}` : ''})`,
      );
      return answer;
    } catch (error) {
      this.#options.requests.log?.(
        `${method} ${shown} failed (${Date.now() - started} ms): ${errorCode(error) ?? error}`,
      );
      throw transportError({
        method,
        url,
        error,
        peer,
        signal,
        timeoutMs: this.#options.requests.timeoutMs,
        proxy: this.#options.dispatcher ? undefined : this.#options.proxy,
      });
    }
  }

  /**
   * A GET to the API with retries (a single attempt with `once`): answers the failure policy retries (500, 502,
   * 503, 504, 429) and refused or dropped connections are asked again; other answers are returned.
   */
  async callApi(
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    once = false,
  ): Promise<ApiAnswer> {
    return withRetries(
      once ? { ...this.#options.requests, retries: 0 } : this.#options.requests,
      async () => {
        const response = await this.send({ method: 'GET', url, peer: 'service', headers, signal });
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
            timeoutMs: this.#options.requests.timeoutMs,
          });
        }
        const answer = readEnvelope(response.statusCode, response.headers, text, `GET ${url.href}`);
        if (answer.status >= 400) {
          const failure = apiError('GET', url, answer);
          if (isRetryable(failure)) throw failure;
        }
        return answer;
      },
      signal,
    );
  }
}
