/**
 * Turns for `/upload`: a server works on a few reservations at once and the others wait, in the order they came.
 * A reservation is the heavy request of the service (a look at the index, a HEAD to the store, a write to the
 * index), and a burst of them from a few scientists' scripts would otherwise take every core and connection the
 * queries and downloads beside it need. Waiting here costs a request nothing but time; past a bounded queue a
 * request is refused at once (503 with Retry-After, which clients retry), rather than left to wait unseen.
 */

/** How many `/upload` requests a server works on at once, by default. */
export const DEFAULT_UPLOAD_CONCURRENCY = 2;

/** How many `/upload` requests may wait for their turn; the next is refused. */
export const MAX_WAITING_UPLOADS = 1_000;

/** Runs work a few at a time, in arrival order, with a bounded queue. */
export class Turns {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly concurrency: number,
    readonly maxWaiting = MAX_WAITING_UPLOADS,
  ) {
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`Turns: the concurrency must be a positive integer, not ${concurrency}`);
    }
  }

  /** Requests waiting for their turn now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `work` when its turn comes and resolves to its result; `full` (nothing run) when the queue is full. */
  async take<T>(work: () => Promise<T>): Promise<{ value: T } | 'full'> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.maxWaiting) return 'full';
      // The turn is handed over by the one that ends, so `#running` stays counted.
      await new Promise<void>((resolvePromise) => this.#waiting.push(resolvePromise));
    } else {
      this.#running += 1;
    }
    try {
      return { value: await work() };
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
