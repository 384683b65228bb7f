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
  let last = Number.NEGATIVE_INFINITY;
  let held: { event: T } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = (event: T) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    held = undefined;
    try {
      emit(event);
    } finally {
      last = performance.now();
    }
  };
  const left = () => last + intervalMs - performance.now();
  const release = () => {
    timer = undefined;
    if (!held) return;
    const wait = left();
    if (wait > 0) arm(wait);
    else send(held.event);
  };
  const arm = (wait: number) => {
    // Rounded up: a timer's delay counts whole milliseconds.
    timer = setTimeout(release, Math.ceil(wait));
    timer.unref?.();
  };
  return {
    push(event, final) {
      const wait = left();
      if (final || wait <= 0) return send(event);
      held = { event };
      if (!timer) arm(wait);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      held = undefined;
    },
  };
}
