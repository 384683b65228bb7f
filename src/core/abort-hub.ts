/**
 * Listening for a signal's abort through one listener per signal: the transfers of a batch listen to the batch's
 * one signal two or three times a file (each request, each body), a large file's parts once per connection being
 * opened and per attempt waiting to try again (64 at once), and an `addEventListener` with its removal costs Node
 * several microseconds, where adding to a set and deleting from it cost next to nothing. The signal itself never
 * holds more than one listener from here, however many wait, so Node never warns of a leak.
 */

/** The callbacks waiting for each signal's abort, in the order they came. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `onAbort` once when `signal` aborts, as `addEventListener('abort', onAbort, { once: true })` would (never
 * for a signal that aborted already: ask `signal.aborted` first). Returns what stops listening.
 */
export function listenForAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    waiting.set(signal, set);
    signal.addEventListener('abort', () => callAll(set), { once: true });
  }
  const own = callbacks;
  own.add(onAbort);
  return () => {
    own.delete(onAbort);
  };
}

/**
 * Calls each callback that waited when the signal aborted, once, unless an earlier one stopped it listening; one
 * that throws is reported as a listener's error is, and the others still run.
 */
function callAll(callbacks: Set<() => void>): void {
  for (const callback of [...callbacks]) {
    if (!callbacks.delete(callback)) continue;
    try {
      callback();
    } catch (error) {
      process.nextTick(() => {
        throw error;
      });
    }
  }
}
