/**
 * The words an HTTP exchange fails with, whichever client carried it (the wire client of `http/wire/`, or undici
 * through a proxy or a dispatcher a caller injected): each client states its faults in these codes, so the
 * failure policy, the messages and the engines read one vocabulary. Failures of the system below both (a refused
 * or reset connection, DNS, TLS, a malformed answer as llhttp names it) keep Node's own codes, which both share.
 */
export const FAULTS = {
  /** No connection (TCP and TLS) within the timeout. */
  connectTimeout: 'HTTP_CONNECT_TIMEOUT',
  /** No byte of an answer's head within the timeout after the request went out. */
  answerTimeout: 'HTTP_ANSWER_TIMEOUT',
  /** No byte of a body being read for the timeout: a stall. */
  bodyTimeout: 'HTTP_BODY_TIMEOUT',
  /** The server closed the connection under the exchange (before or during its answer). */
  closed: 'HTTP_CONNECTION_CLOSED',
  /** An answer's head larger than the client takes. */
  headTooLarge: 'HTTP_HEAD_TOO_LARGE',
  /** The body's reader gave it up before its end. */
  abandoned: 'HTTP_BODY_ABANDONED',
  /** An upload's source gave fewer or more bytes than its stated size. */
  sizeChanged: 'HTTP_UPLOAD_SIZE_CHANGED',
} as const;

export type FaultCode = (typeof FAULTS)[keyof typeof FAULTS];

/** Each fault in words, the same whichever client met it. */
const WORDS: Readonly<Record<FaultCode, string>> = {
  [FAULTS.connectTimeout]: 'no connection within the timeout',
  [FAULTS.answerTimeout]: 'no answer within the timeout',
  [FAULTS.bodyTimeout]: 'no data within the timeout',
  [FAULTS.closed]: 'the server closed the connection',
  [FAULTS.headTooLarge]: "the answer's head is too large",
  [FAULTS.abandoned]: 'the body was given up',
  [FAULTS.sizeChanged]: "the source's size changed",
};

/** The words of a fault of this vocabulary, or undefined for any other code. */
export function faultWords(code: string | undefined): string | undefined {
  return code !== undefined && Object.hasOwn(WORDS, code) ? WORDS[code as FaultCode] : undefined;
}

/** A failed exchange in the shared vocabulary: `code` is one of `FAULTS`, `cause` what the client saw. */
export class DispatchFault extends Error {
  constructor(
    message: string,
    readonly code: FaultCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DispatchFault';
  }
}
