/**
 * The failure policy: the one place that says what a failure means and what is done about it, for the service
 * client, both transfer engines and the batch. It answers three questions:
 *
 * - what kind of failure is this (`isRetryable`): a passing one (a dropped or refused connection, a stall, an
 *   overloaded or restarting server) is worth another attempt; anything else is final for the file;
 * - how often and after how long (`RetryPolicy`, `Attempts`, `withRetries`): `retries` attempts more after the
 *   first, counted only while attempts bring no bytes (one that brought bytes starts the count again), with
 *   capped, jittered exponential backoff or what `Retry-After` asks. Retries never nest: whatever an attempt asks
 *   on the way (a renewed URL, the service) is part of that attempt, so a stalled transfer ends within about
 *   (retries + 1) x the timeout, plus the backoff;
 * - what it ends (`batchWideReason`): one file, or the batch, when every remaining file would meet it too.
 */
import { listenForAbort } from './abort-hub.js';
import { FAULTS } from './dispatch-faults.js';
import { AbortedError, ApiError, isMissionDataError, MissionDataError, NetworkError } from './errors.js';

/** Transport failures that mean the connection broke or went quiet: worth another attempt. */
export const CONNECTION_DROP_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EAI_AGAIN',
  FAULTS.closed,
  FAULTS.connectTimeout,
  FAULTS.answerTimeout,
  FAULTS.bodyTimeout,
]);

/** The `code` of an error, looking through `cause` and aggregated errors (happy-eyeballs connects). */
export function errorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string' && own !== 'ERR_SOCKET_CONNECTION_TIMEOUT') return own;
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested)) {
    for (const inner of nested) {
      const code = errorCode(inner, depth + 1);
      if (code) return code;
    }
  }
  return (
    errorCode((error as { cause?: unknown }).cause, depth + 1) ?? (typeof own === 'string' ? own : undefined)
  );
}

/** Statuses worth asking again, from the service or the object store: errors of a server, rate limiting, gateways. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** S3 error codes worth asking again, whatever the status they come with (`RequestTimeout` is a 400). */
export const RETRYABLE_STORE_CODES: ReadonlySet<string> = new Set([
  'RequestTimeout',
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
]);

/**
 * Errnos of an object store's own disk that a 500 may declare (`ApiError.storeErrno`): asking again meets the
 * same disk, so they are final.
 */
export const STORE_DISK_ERRNOS: ReadonlySet<string> = new Set([
  'EROFS',
  'EACCES',
  'EPERM',
  'EIO',
  'ENOSPC',
  'EDQUOT',
]);

/**
 * True for failures worth another attempt: dropped, reset or refused connections (a server restarting), stalls,
 * 429, 500 (but an object store's 500 declaring a failure of its own disk), 502, 503, 504, and the store's
 * retryable error codes. Never for a cancellation, a refusal (4xx), a bad answer or a local file's failure.
 * Decided from the errors' fields (status, peer, codes), never from their words.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof AbortedError) return false;
  if (error instanceof ApiError) {
    if (error.storeCode !== undefined && RETRYABLE_STORE_CODES.has(error.storeCode)) return true;
    if (error.status === 500 && error.peer === 'object store' && error.storeCode === undefined) {
      return error.storeErrno === undefined || !STORE_DISK_ERRNOS.has(error.storeErrno);
    }
    return RETRYABLE_STATUSES.has(error.status);
  }
  if (error instanceof NetworkError) {
    // A stall, a refused connection (a server restarting), a body that ended before its last byte.
    if (error.code === 'E_TIMEOUT' || error.code === 'E_CONNECTION_REFUSED' || error.code === 'E_INCOMPLETE')
      return true;
    const code = errorCode(error.cause);
    return error.code === 'E_NETWORK' && code !== undefined && CONNECTION_DROP_CODES.has(code);
  }
  if (error instanceof MissionDataError) return false;
  const code = errorCode(error);
  return code !== undefined && (CONNECTION_DROP_CODES.has(code) || code === 'ECONNREFUSED');
}

/** Longest backoff between two attempts, whatever the attempt number. */
const MAX_BACKOFF_MS = 10_000;

/** How often and how patiently to try again. */
export interface RetryPolicy {
  /** Attempts after the first (at least 0). */
  retries: number;
  /** First backoff delay in ms, doubled on every retry (with jitter). */
  retryBaseMs: number;
  /** Longest wait a `Retry-After` header may ask for, in ms. */
  maxRetryAfterMs: number;
  /** Receives one line per retry. */
  log?: ((line: string) => void) | undefined;
}

/**
 * Bytes that arrived but do not match the checksum the store stated are fetched once more from the first byte:
 * damage on the way passes the second time, a damaged object does not (and fails with `E_CHECKSUM`).
 */
export const REFETCHES_AFTER_MISMATCH = 1;

/** The wait before the retry after `failures` attempts in a row failed: what Retry-After asked, or backoff. */
export function backoffMs(policy: RetryPolicy, failures: number, error: unknown): number {
  const asked = error instanceof ApiError ? error.retryAfterMs : undefined;
  if (asked !== undefined) return Math.min(asked, policy.maxRetryAfterMs);
  // "Equal jitter": half fixed, half random, so clients that failed together do not come back together.
  const ceiling = Math.min(policy.retryBaseMs * 2 ** (Math.max(1, failures) - 1), MAX_BACKOFF_MS);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * The attempts of one piece of work (a request, a file, one connection's part of a file): told of each failed
 * attempt, it either waits the backoff (the caller then tries again) or throws the final error. Attempts that
 * brought bytes start the count again, so a transfer that keeps moving is never given up for its drops.
 */
export class Attempts {
  #failures = 0;
  #attempts = 0;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /**
   * One attempt failed with `error`; `progressed` when it brought bytes. Resolves once the next attempt may
   * start; throws `error` when it is final (not worth retrying, or the retries are spent) and an
   * `AbortedError` when the signal aborted.
   */
  async failed(error: unknown, progressed = false): Promise<void> {
    if (this.signal?.aborted) throw new AbortedError(undefined, { cause: this.signal.reason });
    if (!isRetryable(error)) throw error;
    this.#attempts += 1;
    this.#failures = progressed ? 0 : this.#failures + 1;
    if (this.#failures > this.policy.retries) {
      if (this.#attempts > 1 && error instanceof Error) {
        error.message += ` (gave up after ${this.#attempts} attempts)`;
      }
      throw error;
    }
    const delay = progressed ? 0 : backoffMs(this.policy, this.#failures, error);
    this.policy.log?.(
      `retry ${this.#failures}/${this.policy.retries} in ${delay} ms: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (delay > 0) await sleep(delay, this.signal);
  }
}

/** Runs `work` until it succeeds, fails for good, runs out of retries or `signal` aborts. */
export async function withRetries<T>(
  policy: RetryPolicy,
  work: (attempt: number) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const attempts = new Attempts(policy, signal);
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    try {
      return await work(attempt);
    } catch (error) {
      if (signal?.aborted && !(error instanceof AbortedError)) {
        throw new AbortedError(undefined, { cause: signal.reason });
      }
      await attempts.failed(error);
    }
  }
}

/**
 * Waits `ms`, or rejects with an `AbortedError` as soon as `signal` aborts (heard through the hub: every connection
 * of a transfer may be waiting to try again at once).
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError(undefined, { cause: signal.reason }));
      return;
    }
    const timer = setTimeout(() => {
      unlisten?.();
      resolve();
    }, ms);
    const unlisten =
      signal &&
      listenForAbort(signal, () => {
        clearTimeout(timer);
        reject(new AbortedError(undefined, { cause: signal.reason }));
      });
  });
}

/** Codes of the errors that say the service itself cannot be reached, whichever file is asked for. */
const UNREACHABLE_CODES = new Set(['E_CONNECTION_REFUSED', 'E_HOST_NOT_FOUND', 'E_CERTIFICATE', 'E_TLS']);

/** Local errno codes that every file written to the same data root would meet. */
const DATA_ROOT_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/**
 * Why every remaining file of a batch would fail the same way, or undefined when `error` concerns one file only:
 * the service cannot be reached or a side stopped answering (after the retries), the service refuses the API key
 * (401/403 from the service itself on the upload or download route, not an object-store address), or the data root cannot take files (not
 * writable, full, read-only).
 */
export function batchWideReason(error: Error | undefined): string | undefined {
  if (error instanceof NetworkError && error.proxy !== undefined && UNREACHABLE_CODES.has(error.code)) {
    return 'the proxy could not be reached';
  }
  if (error instanceof NetworkError && error.peer === 'service' && UNREACHABLE_CODES.has(error.code)) {
    return 'the service could not be reached';
  }
  // A file given up after its retries because a side stopped answering: the files after it would wait as long.
  if (error instanceof NetworkError && error.code === 'E_TIMEOUT') {
    return error.peer === 'service' ? 'the service stopped answering' : 'the object store stopped answering';
  }
  if (
    error instanceof ApiError &&
    error.peer === 'service' &&
    (error.status === 401 || error.status === 403) &&
    (error.route === 'upload' || error.route === 'download')
  ) {
    return error.status === 401
      ? 'the service asked for an API key (401)'
      : 'the service refused the API key (403)';
  }
  // The system's own word first: a root that cannot take files because its disk is full says so.
  const errno = isMissionDataError(error) ? errorCode(error.cause) : undefined;
  if (errno !== undefined && DATA_ROOT_ERRNOS.has(errno)) {
    return errno === 'EROFS' ? 'the data root is read-only' : 'the disk is full';
  }
  if (isMissionDataError(error) && error.code === 'E_NO_SPACE') return 'the disk is full';
  if (isMissionDataError(error) && error.code === 'E_DATA_ROOT') return 'the data root cannot take files';
  return undefined;
}
