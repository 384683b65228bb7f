/** The retry policy: which failures are worth another attempt, and how long to wait before it. */
import { AbortedError, ApiError, MissionDataError, NetworkError } from '../core/errors.js';
import { CONNECTION_DROP_CODES, errorCode } from './failures.js';

/**
 * Statuses worth asking again: rate limiting and gateway trouble. A 500 is retried when the store names it
 * `InternalError` (S3 documents that one as retryable), not when a server names a failure of its own disk.
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** S3 error codes worth asking again, whatever the status they come with (`RequestTimeout` is a 400). */
export const RETRYABLE_STORE_CODES: ReadonlySet<string> = new Set([
  'RequestTimeout',
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
]);

/** Longest backoff between two attempts, whatever the attempt number. */
const MAX_BACKOFF_MS = 10_000;

/** How often and how patiently to retry. */
export interface RetryPolicy {
  /** Attempts in all, retries included (at least 1). */
  attempts: number;
  /** First backoff delay in ms, doubled on every retry (with jitter). */
  retryBaseMs: number;
  /** Longest wait a `Retry-After` header may ask for, in ms. */
  maxRetryAfterMs: number;
  /** Receives one line per retry. */
  log?: ((line: string) => void) | undefined;
}

/**
 * True for errors worth retrying: network resets, refused connections (a server restarting), timeouts, 429 and
 * 5xx answers but 501/505, and the store's retryable error codes.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof AbortedError) return false;
  if (error instanceof ApiError) {
    return (
      RETRYABLE_STATUSES.has(error.status) ||
      (error.storeCode !== undefined && RETRYABLE_STORE_CODES.has(error.storeCode))
    );
  }
  if (error instanceof NetworkError) {
    if (error.code === 'E_TIMEOUT') return true;
    // A store that refuses connections may be restarting; a refused service URL is said at once (a typo).
    if (error.code === 'E_CONNECTION_REFUSED') return error.peer === 'object store';
    const code = errorCode(error.cause);
    return error.code === 'E_NETWORK' && code !== undefined && CONNECTION_DROP_CODES.has(code);
  }
  if (error instanceof MissionDataError) return false;
  const code = errorCode(error);
  return code !== undefined && (CONNECTION_DROP_CODES.has(code) || code === 'ECONNREFUSED');
}

/** Runs `work` until it succeeds, fails for good, runs out of attempts or `signal` aborts. */
export async function withRetries<T>(
  policy: RetryPolicy,
  work: (attempt: number) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    try {
      return await work(attempt);
    } catch (error) {
      if (signal?.aborted && !(error instanceof AbortedError)) {
        throw new AbortedError(undefined, { cause: signal.reason });
      }
      if (!isRetryable(error)) throw error;
      if (attempt >= policy.attempts) {
        if (policy.attempts > 1 && error instanceof Error) {
          error.message += ` (gave up after ${policy.attempts} attempts)`;
        }
        throw error;
      }
      const delay = backoffMs(policy, attempt, error);
      policy.log?.(
        `retry ${attempt + 1}/${policy.attempts} in ${delay} ms: ${error instanceof Error ? error.message : String(error)}`,
      );
      await sleep(delay, signal);
    }
  }
}

/** The wait before attempt `attempt + 1`: what the answer's Retry-After asked for, or exponential backoff. */
export function backoffMs(policy: RetryPolicy, attempt: number, error: unknown): number {
  const asked = error instanceof ApiError ? error.retryAfterMs : undefined;
  if (asked !== undefined) return Math.min(asked, policy.maxRetryAfterMs);
  // "Equal jitter": half fixed, half random, so clients that failed together do not come back together.
  const ceiling = Math.min(policy.retryBaseMs * 2 ** (attempt - 1), MAX_BACKOFF_MS);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Waits `ms`, or rejects with an `AbortedError` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError(undefined, { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(undefined, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
