/** How often a transfer's progress reaches a library caller's `onProgress`. */
export const PROGRESS_INTERVAL_MS = 100;

/** One transfer's paced progress: `push` each count; `stop` once the transfer is over, before its `done`. */
export interface ProgressPace<T> {
  push(event: T, final: boolean): void;
  stop(): void;
}

/**
 * Paces one transfer's progress: the first event goes through, then at most one per `intervalMs`; an event held
 * back goes out when its interval is over (so the count a stall stopped at is told), and a `final` one (the last
 * byte in) at once.
 *
 * The interval is measured on the monotonic clock (`performance.now()`, as a caller timing its calls reads it),
 * from the moment the previous call returned: `Date.now()` is a wall clock in whole milliseconds, and a timer may
 * fire up to a millisecond before its delay by that clock, which let two calls come 99 ms apart. A timer that
 * fires early waits out the rest.
 */
export function progressPace<T>(
  emit: (event: T) => void,
  intervalMs = PROGRESS_INTERVAL_MS,
): ProgressPace<T> {
  return new Pace(emit, intervalMs);
}

/**
 * The pace of `progressPace`, its state in fields: a batch makes one per file, and a small file's only event is
 * its last (sent at once), so nothing here is made per pace but the pace itself.
 */
class Pace<T> implements ProgressPace<T> {
  #last = Number.NEGATIVE_INFINITY;
  #held: { event: T } | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly emit: (event: T) => void,
    private readonly intervalMs: number,
  ) {}

  push(event: T, final: boolean): void {
    const wait = this.#left();
    if (final || wait <= 0) {
      this.#send(event);
      return;
    }
    this.#held = { event };
    if (!this.#timer) this.#arm(wait);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held = undefined;
  }

  #send(event: T): void {
    this.stop();
    try {
      this.emit(event);
    } finally {
      this.#last = performance.now();
    }
  }

  #left(): number {
    return this.#last + this.intervalMs - performance.now();
  }

  /** A timer's callback: the pace it was armed for is its argument (no function is made per pace). */
  static #fire<T>(pace: Pace<T>): void {
    pace.#release();
  }

  #release(): void {
    this.#timer = undefined;
    const held = this.#held;
    if (!held) return;
    const wait = this.#left();
    if (wait > 0) this.#arm(wait);
    else this.#send(held.event);
  }

  #arm(wait: number): void {
    // Rounded up: a timer's delay counts whole milliseconds.
    this.#timer = setTimeout(Pace.#fire, Math.ceil(wait), this);
    this.#timer.unref?.();
  }
}
