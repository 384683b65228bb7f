/** What the wire client is asked and answers, and the codes its failures carry. */
import type { WireBody } from './wire-body.js';

/** The limit of a connection: to connect (and finish the TLS handshake), and without a byte from the server while an answer is awaited or read. */
export interface WireTimeouts {
  timeoutMs: number;
}

/** The body of a PUT: a source read synchronously at any position (a retry reads it again from 0). */
export interface WireUpload {
  size: number;
  /** Fills `into` from byte `position` of the source; returns the bytes read (fewer only at its end). */
  read(into: Buffer, position: number): number;
  /** Called before the last bytes are sent: throws when the source is not as it was measured. */
  check?: (() => void) | undefined;
  /** Bytes handed to the network so far, in this attempt. */
  onBytes?: ((sent: number) => void) | undefined;
}

/** One request of the wire client. */
export interface WireRequest {
  method: 'GET' | 'PUT';
  url: URL;
  headers: Record<string, string>;
  upload?: WireUpload | undefined;
  signal?: AbortSignal | undefined;
}

/** An answer: its head, and its body to consume (or dump, or destroy). */
export interface WireAnswer {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: WireBody;
}

/** The error of a request its signal stopped. */
export function abortError(signal: AbortSignal | undefined): Error {
  return Object.assign(new Error('This operation was aborted', { cause: signal?.reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}
