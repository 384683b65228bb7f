/**
 * Requests carried by undici (a proxy in force, or a dispatcher the caller injected), stated as the wire client
 * states them: `content-length` from the upload's size, failures in the shared vocabulary
 * (`core/dispatch-faults.ts`), and a body whose chunks are handed over under `body.ts`'s contract.
 */
import type { Dispatcher } from 'undici';
import { DispatchFault, FAULTS, type FaultCode } from '../core/dispatch-faults.js';
import type { ProxySettings } from '../core/proxy.js';
import { type AnswerBody, readableBody, type SentAnswer } from './body.js';
import type { Dispatch, DispatchRequest } from './dispatch.js';
import { countBytes } from './objects.js';
import { createAgent, loadTransport, OBJECT_HIGH_WATER_MARK } from './undici.js';

/** undici's codes for what the shared vocabulary names; its other codes are Node's and pass as they are. */
const UNDICI_FAULTS: Readonly<Record<string, FaultCode>> = {
  UND_ERR_CONNECT_TIMEOUT: FAULTS.connectTimeout,
  UND_ERR_HEADERS_TIMEOUT: FAULTS.answerTimeout,
  UND_ERR_BODY_TIMEOUT: FAULTS.bodyTimeout,
  UND_ERR_SOCKET: FAULTS.closed,
  UND_ERR_CLOSED: FAULTS.closed,
  UND_ERR_HEADERS_OVERFLOW: FAULTS.headTooLarge,
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: FAULTS.sizeChanged,
  UND_ERR_ABORTED: FAULTS.abandoned,
};

/** An undici failure in the shared vocabulary (its own error kept as the cause); any other error as it is. */
export function inVocabulary(error: unknown): unknown {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string' || !Object.hasOwn(UNDICI_FAULTS, code)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DispatchFault(message, UNDICI_FAULTS[code] as FaultCode, { cause: error });
}

/** What an undici dispatch is made with. */
export interface UndiciSettings {
  timeoutMs: number;
  proxy: ProxySettings | undefined;
  dispatcher: Dispatcher | undefined;
}

export class UndiciDispatch implements Dispatch {
  readonly #settings: UndiciSettings;
  #agent: Promise<Dispatcher> | undefined;
  #closed = false;

  constructor(settings: UndiciSettings) {
    this.#settings = settings;
  }

  async request(request: DispatchRequest): Promise<SentAnswer> {
    const { method, url, upload, signal } = request;
    const [dispatcher, { request: send }] = await Promise.all([this.#dispatcher(), loadTransport()]);
    const { timeoutMs } = this.#settings;
    const headers = upload ? { ...request.headers, 'content-length': String(upload.size) } : request.headers;
    try {
      const response = await send.call(dispatcher, {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        body: upload ? countBytes(upload.open(), upload.onBytes) : null,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        // Object bodies are long streams: larger stream buffers take fewer turns of the loop per MiB.
        ...(method === 'GET' ? { highWaterMark: OBJECT_HIGH_WATER_MARK } : {}),
      });
      return {
        statusCode: response.statusCode,
        headers: response.headers,
        body: translated(readableBody(response.body)),
      };
    } catch (error) {
      throw inVocabulary(error);
    }
  }

  summary(): string | undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const agent = this.#agent;
    this.#agent = undefined;
    if (agent) await (await agent).close();
  }

  #dispatcher(): Promise<Dispatcher> {
    const { dispatcher, timeoutMs, proxy } = this.#settings;
    if (dispatcher) return Promise.resolve(dispatcher);
    if (this.#closed) return Promise.reject(new Error('This client is closed.'));
    this.#agent ??= createAgent({ timeoutMs, proxy });
    return this.#agent;
  }
}

/** A body whose early end is told in the shared vocabulary. */
function translated(body: AnswerBody): AnswerBody {
  return {
    consume: (onChunk) => body.consume(onChunk).then(inVocabulary),
    destroy: (error) => body.destroy(error),
    dump: () => body.dump(),
    bytes: (limit, onLonger, reuse) =>
      body.bytes(limit, onLonger, reuse).catch((error: unknown) => Promise.reject(inVocabulary(error))),
  };
}
