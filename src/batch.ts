/**
 * What the download and upload engines share: a pool of transfers, one signal per batch, the error a
 * cancelled transfer fails with, and the rule that stops a batch once the service cannot be reached at all.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, isMissionDataError, NetworkError, NOT_ATTEMPTED } from './errors.js';

/**
 * A signal that follows `signal`, for the transfers of one batch: each running transfer listens to it a few
 * times (the HTTP client, the body), so its listener limit grows with the concurrency instead of warning.
 */
export function linkSignal(
  signal: AbortSignal | undefined,
  concurrency: number,
): { signal: AbortSignal; dispose: () => void } | undefined {
  if (!signal) return undefined;
  const controller = new AbortController();
  setMaxListeners(Math.max(10, concurrency * 4 + 10), controller.signal);
  const follow = () => controller.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, dispose: () => signal.removeEventListener('abort', follow) };
}

/** Runs `work(0..count-1)` with at most `concurrency` running at once. `work` must not throw. */
export async function runPool(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** The error a cancelled transfer fails with, worded from the signal's reason. */
export function abortedError(signal: AbortSignal): AbortedError {
  const reason: unknown = signal.reason;
  if (reason instanceof AbortedError) return reason;
  return new AbortedError(
    reason instanceof Error && reason.name !== 'AbortError' ? `Cancelled: ${reason.message}.` : 'Cancelled.',
  );
}

/** The error a file's result carries: a cancellation is reported as one, whatever broke on the way. */
export function failureOf(error: unknown, signal: AbortSignal | undefined): Error {
  const reason = signal?.aborted && !(error instanceof AbortedError) ? abortedError(signal) : error;
  return reason instanceof Error ? reason : new Error(String(reason));
}

/** Codes of the errors that say the service itself cannot be reached, whichever file is asked for. */
const UNREACHABLE_CODES = new Set(['E_CONNECTION_REFUSED', 'E_HOST_NOT_FOUND', 'E_CERTIFICATE', 'E_TLS']);

/**
 * Stops a batch once the service cannot be reached: asking it again for each remaining file would only repeat
 * the same failure, so those files are not attempted.
 */
export class BatchStop {
  #reason: Error | undefined;

  /** Looks at one file's failure; a failure to reach the service stops the files not yet started. */
  note(error: Error | undefined): void {
    if (error instanceof NetworkError && error.peer === 'service' && UNREACHABLE_CODES.has(error.code)) {
      this.#reason ??= error;
    }
  }

  /** Why a file is left alone, once the batch stopped; undefined while it runs. */
  notAttempted(): NetworkError | undefined {
    const cause = this.#reason;
    if (!cause) return undefined;
    return new NetworkError('not attempted: the service could not be reached', {
      code: NOT_ATTEMPTED,
      cause,
      ...(isMissionDataError(cause) && cause.hint ? { hint: cause.hint } : {}),
    });
  }
}
