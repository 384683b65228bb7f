/**
 * What the download and upload engines share: a pool of transfers, one signal per batch, the error a
 * cancelled transfer fails with, and the stop of a batch once the failure policy says every remaining file would
 * fail the same way (`batchWideReason`).
 */
import { setMaxListeners } from 'node:events';
import {
  AbortedError,
  ExitCode,
  isMissionDataError,
  MissionDataError,
  NetworkError,
  NOT_ATTEMPTED,
} from './errors.js';
import { batchWideReason } from './failure-policy.js';

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

/**
 * Holds every file of a batch but the first until the service has answered the first one (or the first one
 * ended): a failure that stops the batch (a refused key, an unreachable service) is then known before the other
 * files ask, and an early stop costs one request instead of one per running transfer.
 */
export class FirstAnswer {
  readonly #opened: Promise<void>;
  #open: () => void = () => undefined;

  constructor() {
    this.#opened = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  /** Lets the rest of the batch go; later calls do nothing. */
  open(): void {
    this.#open();
  }

  /** Resolves once `open` was called, or at once when `signal` aborts (the transfer then sees the abort). */
  wait(signal: AbortSignal | undefined): Promise<void> {
    return settledOrAborted(this.#opened, signal).catch(() => undefined);
  }
}

/** Waits for `work` to settle, or throws an `AbortedError` as soon as `signal` aborts. */
export async function settledOrAborted(
  work: Promise<unknown>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  if (!signal) return settled;
  if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError(undefined, { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    void settled.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** The error a cancelled transfer fails with, worded from the signal's reason. */
export function abortedError(signal: AbortSignal): AbortedError {
  const reason: unknown = signal.reason;
  if (reason instanceof AbortedError) return reason;
  return new AbortedError(undefined, { cause: reason });
}

/**
 * The error of a file the batch never began because it was cancelled first: counted as not started, apart from
 * the files that failed (issue 19: Ctrl-C reported every file still queued as a failure of its own).
 */
export function notStartedError(signal: AbortSignal): MissionDataError {
  return new MissionDataError('not attempted: the batch was cancelled', NOT_ATTEMPTED, ExitCode.Failure, {
    cause: abortedError(signal),
  });
}

/** The error a file's result carries: a cancellation is reported as one, whatever broke on the way. */
export function failureOf(error: unknown, signal: AbortSignal | undefined): Error {
  const reason = signal?.aborted && !(error instanceof AbortedError) ? abortedError(signal) : error;
  return reason instanceof Error ? reason : new Error(String(reason));
}

/**
 * Stops a batch once a failure shows every remaining file would fail the same way (see `batchWideReason`):
 * asking again for each remaining file would only repeat it, so those files are not attempted.
 */
export class BatchStop {
  #reason: { cause: Error; why: string } | undefined;

  /** Looks at one file's failure; a batch-wide one stops the files not yet started. */
  note(error: Error | undefined): void {
    if (this.#reason) return;
    const why = batchWideReason(error);
    if (why && error) this.#reason = { cause: error, why };
  }

  /** Why a file is left alone, once the batch stopped; undefined while it runs. */
  notAttempted(): MissionDataError | undefined {
    const reason = this.#reason;
    if (!reason) return undefined;
    const { cause, why } = reason;
    const options = { cause, ...(isMissionDataError(cause) && cause.hint ? { hint: cause.hint } : {}) };
    const message = `not attempted: ${why}`;
    // Kept a NetworkError when the service is unreachable, as callers matching on the class expect.
    return cause instanceof NetworkError
      ? new NetworkError(message, { ...options, code: NOT_ATTEMPTED })
      : new MissionDataError(message, NOT_ATTEMPTED, ExitCode.Failure, options);
  }
}
