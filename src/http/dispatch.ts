/**
 * How a request travels: one interface, and the one client behind it, chosen once per service client
 * (`service/transport.ts`). The wire client (`wire/pool.ts`: its own connections, a socket read into one buffer,
 * no stream between it and the file) carries everything it can; undici (`undici-dispatch.ts`) carries what it
 * cannot: requests through a proxy, and those on a dispatcher a caller injected. Both state their failures in one
 * vocabulary (`core/dispatch-faults.ts`) and hand over bodies under one contract (`body.ts`), so nothing above
 * this line knows which one carried a request.
 */
import type { Readable } from 'node:stream';
import type { SentAnswer } from './body.js';

/** The bytes a PUT sends, in the two forms the clients take. */
export interface UploadBody {
  size: number;
  /** Opens the bytes as a stream; called again for every attempt, so a retry re-reads the file from the start. */
  open: () => Readable;
  /**
   * Reads bytes from `position` into `into` synchronously, returning how many (the form the wire client sends
   * from, with no stream between the file and the socket).
   */
  read: (into: Buffer, position: number) => number;
  /** Called before the last bytes are sent: throws when the file is no longer as it was measured. */
  check?: (() => void) | undefined;
  /** The bytes sent in the current attempt. */
  onBytes?: ((sent: number) => void) | undefined;
}

/** One request as a dispatch sends it. */
export interface DispatchRequest {
  method: 'GET' | 'PUT';
  url: URL;
  /** Lower-case names. `content-length` is the dispatch's to state, from the upload's size. */
  headers: Record<string, string>;
  upload?: UploadBody | undefined;
  signal?: AbortSignal | undefined;
}

/** What carries requests. */
export interface Dispatch {
  /** Sends a request; resolves once the answer's head is read. A failure's `code` is one of `FAULTS` or Node's. */
  request(request: DispatchRequest): Promise<SentAnswer>;
  /** Closes the connections it opened (never an injected dispatcher's); requests in progress fail. */
  close(): Promise<void>;
  /** What its connections did, for the request log, once requests were sent. */
  summary(): string | undefined;
}
