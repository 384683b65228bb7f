/**
 * Turns for `/upload`: reads go first. A reservation is the heavy request of the service (a look at the index, a
 * HEAD to the store, a write to the index), and a burst of them from a few scientists' scripts would otherwise
 * take every core and connection the queries and downloads beside it need. So while a `/query` or a `/download`
 * is being answered (or was, within the last second: reads come in runs), a server works on only a few
 * reservations at once and the others wait, in the order they came; with no read to answer, many run at once, and
 * an uploader alone is not slowed. Waiting costs a request
 * nothing but time; past a bounded queue a request is refused at once (503 with Retry-After, which clients
 * retry), rather than left to wait unseen.
 */

/** How many `/upload` requests a server works on at once while it answers reads, by default. */
export const DEFAULT_UPLOAD_CONCURRENCY = 2;

/** How many `/upload` requests a server works on at once when it answers no read (at least the above). */
export const IDLE_UPLOAD_CONCURRENCY = 16;

/** How long after a read was answered uploads still keep to the few: reads come in runs, a query after a query. */
export const READS_LINGER_MS = 1_000;

/** How many `/upload` requests may wait for their turn; the next is refused. */
export const MAX_WAITING_UPLOADS = 1_000;

/** Runs uploads a few at a time while reads run, many when none do, in arrival order, with a bounded queue. */
export class Turns {
  #running = 0;
  #reading = 0;
  /** When the last read was answered (`performance.now()`). */
  #lastReadEnd = Number.NEGATIVE_INFINITY;
  /** Admits the waiting once reads have stopped for `READS_LINGER_MS`. */
  #lingerTimer: NodeJS.Timeout | undefined;
  readonly #waiting: Array<() => void> = [];
  readonly #idleConcurrency: number;

  constructor(
    /** Uploads at once while a read is being answered. */
    readonly concurrency: number,
    readonly maxWaiting = MAX_WAITING_UPLOADS,
    /** See `READS_LINGER_MS`. */
    readonly lingerMs = READS_LINGER_MS,
  ) {
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`Turns: the concurrency must be a positive integer, not ${concurrency}`);
    }
    this.#idleConcurrency = Math.max(concurrency, IDLE_UPLOAD_CONCURRENCY);
  }

  /** Requests waiting for their turn now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** True while a read is answered, or was within `READS_LINGER_MS`. */
  get #reads(): boolean {
    return this.#reading > 0 || performance.now() - this.#lastReadEnd < this.lingerMs;
  }

  /** Uploads that may run now. */
  get #limit(): number {
    return this.#reads ? this.concurrency : this.#idleConcurrency;
  }

  /** Runs `work` when its turn comes and resolves to its result; `full` (nothing run) when the queue is full. */
  async take<T>(work: () => Promise<T>): Promise<{ value: T } | 'full'> {
    if (this.#running >= this.#limit || this.#waiting.length > 0) {
      if (this.#waiting.length >= this.maxWaiting) return 'full';
      // Started by `#admit` (`#running` is counted there), in arrival order.
      await new Promise<void>((resolvePromise) => {
        this.#waiting.push(resolvePromise);
        this.#admit();
      });
    } else {
      this.#running += 1;
    }
    try {
      return { value: await work() };
    } finally {
      this.#running -= 1;
      this.#admit();
    }
  }

  /** Answers a read (`/query`, `/download`): while it runs, uploads keep to `concurrency` at once. */
  async reading<T>(work: () => Promise<T>): Promise<T> {
    this.#reading += 1;
    try {
      return await work();
    } finally {
      this.#reading -= 1;
      this.#lastReadEnd = performance.now();
      this.#admit();
    }
  }

  /** Starts waiting uploads while the limit allows; when reads have just stopped, again once they linger no more. */
  #admit(): void {
    while (this.#waiting.length > 0 && this.#running < this.#limit) {
      this.#running += 1;
      this.#waiting.shift()?.();
    }
    if (this.#waiting.length > 0 && this.#reading === 0 && this.#lingerTimer === undefined) {
      const left = Math.max(0, this.lingerMs - (performance.now() - this.#lastReadEnd));
      this.#lingerTimer = setTimeout(() => {
        this.#lingerTimer = undefined;
        this.#admit();
      }, left + 1);
      this.#lingerTimer.unref();
    }
  }
}
