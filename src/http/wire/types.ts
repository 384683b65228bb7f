/** What the wire client is asked and answers. */
import type { DispatchRequest, UploadBody } from '../dispatch.js';
import type { WireBody } from './wire-body.js';

/** The limit of a connection: to connect (and finish the TLS handshake), and without a byte from the server while an answer is awaited or read. */
export interface WireTimeouts {
  timeoutMs: number;
}

/** The body of a PUT as the wire client sends it: read synchronously at any position (a retry reads from 0). */
export type WireUpload = Omit<UploadBody, 'open'>;

/** One request of the wire client: a dispatch's request, sent from the upload's reads alone. */
export interface WireRequest extends Omit<DispatchRequest, 'upload'> {
  upload?: WireUpload | undefined;
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
