/**
 * A test-only undici Dispatcher that answers every request from msw handlers. msw's interceptors cannot see
 * undici's own requests (mswjs/msw#2165), so the client is handed this dispatcher instead: it builds a Fetch
 * `Request`, asks `getResponse(handlers, request)` and drives undici's legacy handler API with the answer.
 */
import { Readable } from 'node:stream';
import { getResponse, type RequestHandler } from 'msw';
import { Dispatcher, errors } from 'undici';

/** What the dispatcher saw of one request, for assertions. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: Headers;
  body: Buffer;
}

type LegacyHandler = {
  onConnect?: (abort: (reason?: Error) => void) => void;
  onHeaders?: (
    status: number,
    headers: Buffer[],
    resume: () => void,
    statusText: string,
  ) => boolean | undefined;
  onData?: (chunk: Buffer) => boolean | undefined;
  onComplete?: (trailers: Buffer[]) => void;
  onError?: (error: Error) => void;
};

/** An undici Dispatcher backed by msw handlers; `requests` lists every request it received. */
export class MswDispatcher extends Dispatcher {
  readonly requests: SeenRequest[] = [];

  constructor(private readonly handlers: RequestHandler[]) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    void this.#run(options, handler as unknown as LegacyHandler);
    return true;
  }

  override async close(): Promise<void> {}

  override async destroy(): Promise<void> {}

  async #run(options: Dispatcher.DispatchOptions, handler: LegacyHandler): Promise<void> {
    let aborted: Error | undefined;
    handler.onConnect?.((reason) => {
      aborted = reason ?? new errors.RequestAbortedError();
    });
    try {
      const url = new URL(options.path, options.origin);
      const headers = toHeaders(options.headers);
      const body = await readBody(options.body);
      this.requests.push({ method: options.method, url: url.href, headers, body });
      if (aborted) throw aborted;
      const request = new Request(url, {
        method: options.method,
        headers,
        ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
      });
      const response = await getResponse(this.handlers, request);
      if (aborted) throw aborted;
      if (!response) throw new Error(`No msw handler for ${options.method} ${url.href}`);
      // `HttpResponse.error()` stands for a connection the server closed without answering.
      if (response.type === 'error') throw new errors.SocketError('other side closed');
      const rawHeaders: Buffer[] = [];
      response.headers.forEach((value, name) => {
        rawHeaders.push(Buffer.from(name), Buffer.from(value));
      });
      let resumeWaiter: (() => void) | undefined;
      const resume = () => {
        resumeWaiter?.();
        resumeWaiter = undefined;
      };
      handler.onHeaders?.(response.status, rawHeaders, resume, response.statusText);
      if (response.body) {
        for await (const chunk of Readable.fromWeb(response.body as never) as AsyncIterable<Uint8Array>) {
          if (aborted) throw aborted;
          if (handler.onData?.(Buffer.from(chunk)) === false) {
            await new Promise<void>((done) => {
              resumeWaiter = done;
            });
          }
        }
      }
      if (aborted) throw aborted;
      handler.onComplete?.([]);
    } catch (error) {
      handler.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

function toHeaders(raw: Dispatcher.DispatchOptions['headers']): Headers {
  const headers = new Headers();
  if (!raw) return headers;
  if (Array.isArray(raw)) {
    for (let index = 0; index + 1 < raw.length; index += 2)
      headers.append(String(raw[index]), String(raw[index + 1]));
    return headers;
  }
  for (const [name, value] of Object.entries(raw as Record<string, string | string[] | undefined>)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, String(item));
  }
  return headers;
}

/** Reads a request body of any form undici accepts (string, buffer, stream, async iterable). */
async function readBody(body: Dispatcher.DispatchOptions['body']): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
