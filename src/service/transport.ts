/**
 * How the service client's requests travel: one dispatch (the wire client, or undici for a proxy or an injected
 * dispatcher), one timeout for the connection, the first byte and every gap between bytes, the request log, and an
 * API GET read whole and asked again as the failure policy says. What the routes mean is `client.ts`'s business.
 */
import type { Dispatcher } from 'undici';
import type { RequestSettings } from '../core/call-settings.js';
import { errorCode, isRetryable, withRetries } from '../core/failure-policy.js';
import type { ProxySettings } from '../core/proxy.js';
import { displayUrl } from '../core/urls.js';
import type { ReusedBuffer, SentAnswer } from '../http/body.js';
import type { Dispatch } from '../http/dispatch.js';
import { type ApiAnswer, readBytes, readEnvelope } from '../http/envelope.js';
import { apiError, requestIdOf } from '../http/failures.js';
import type { ObjectTransport, OutgoingRequest } from '../http/objects.js';
import { transportError } from '../http/transport-failures.js';
import { UndiciDispatch } from '../http/undici-dispatch.js';
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
 * Requests to the service and to the object store behind its pre-signed URLs, over the one dispatch chosen when
 * the client is made (`http/dispatch.ts`): the wire client's own connections, or undici through a proxy or on a
 * dispatcher the caller injected. Which one carries a request changes nothing here: both state failures alike.
 */
export class ServiceTransport implements ObjectTransport {
  readonly #options: TransportOptions;
  readonly #dispatch: Dispatch;
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
    const { dispatcher, proxy } = options;
    const timeoutMs = options.requests.timeoutMs;
    this.#dispatch =
      dispatcher || proxy?.http || proxy?.https
        ? new UndiciDispatch({ timeoutMs, proxy, dispatcher })
        : new WireClient({ timeoutMs });
  }

  /** Closes the connections this transport opened (an injected dispatcher stays open: its owner closes it). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const summary = this.#dispatch.summary();
    if (summary) this.#options.requests.log?.(summary);
    await this.#dispatch.close();
  }

  /** One request, transport errors translated; the caller reads or dumps the body. */
  async send(outgoing: OutgoingRequest): Promise<SentAnswer> {
    const { method, url, peer, signal, upload } = outgoing;
    const { log } = this.#options.requests;
    // The URL as the request log shows it, made only for a log.
    const shown = () => (peer === 'service' ? url.href : displayUrl(url));
    const started = Date.now();
    try {
      if (this.#closed) throw new Error('This client is closed.');
      const answer = await this.#dispatch.request({ method, url, headers: outgoing.headers, upload, signal });
      if (log) {
        const id = requestIdOf(answer.headers['x-request-id']);
        log(
          `${method} ${shown()} -> ${answer.statusCode} (${Date.now() - started} ms${id ? `, request id ${id}` : ''})`,
        );
      }
      return answer;
    } catch (error) {
      log?.(`${method} ${shown()} failed (${Date.now() - started} ms): ${errorCode(error) ?? error}`);
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
   * 503, 504, 429) and refused or dropped connections are asked again; other answers are returned. With
   * `lazyArrays`, a large answer that is an array (or an envelope of one) keeps it as text, its elements parsed
   * as they are taken (see `readEnvelope`); with `reuse`, the answer's bytes are read into that buffer.
   */
  async callApi(
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    {
      once = false,
      lazyArrays = false,
      reuse,
    }: { once?: boolean; lazyArrays?: boolean; reuse?: ReusedBuffer | undefined } = {},
  ): Promise<ApiAnswer> {
    return withRetries(
      once ? { ...this.#options.requests, retries: 0 } : this.#options.requests,
      async () => {
        const response = await this.send({ method: 'GET', url, peer: 'service', headers, signal });
        let bytes: Buffer;
        try {
          bytes = await readBytes(response.body, MAX_API_BODY_BYTES, `GET ${url.href}`, { reuse });
        } catch (error) {
          throw transportError({
            method: 'GET',
            url,
            error,
            peer: 'service',
            answered: true,
            signal,
            timeoutMs: this.#options.requests.timeoutMs,
          });
        }
        const answer = readEnvelope(response.statusCode, response.headers, bytes, `GET ${url.href}`, {
          lazyArrays,
        });
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
