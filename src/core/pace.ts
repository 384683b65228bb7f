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
    last = Date.now();
    emit(event);
  };
  return {
    push(event, final) {
      const wait = last + intervalMs - Date.now();
      if (final || wait <= 0) return send(event);
      held = { event };
      if (!timer) {
        timer = setTimeout(() => {
          timer = undefined;
          if (held) send(held.event);
        }, wait);
        timer.unref?.();
      }
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      held = undefined;
    },
  };
}
