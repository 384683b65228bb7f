/**
 * A connection's idle timer (`--timeout`), for its reader (`answer-reader.ts`): it runs while an answer is awaited,
 * every byte that comes or goes restarts it, and once nothing did for its timeout it calls `expired`. One Node
 * timer, looked at when due rather than moved at every read and every exchange: a look that finds bytes came
 * since waits out the rest.
 */
export class IdleTimer {
  readonly #timeoutMs: number;
  readonly #expired: () => void;
  #running = false;
  /** Since when nothing came or went (`performance.now()`). */
  #quietSince = 0;
  /** The pending look, when one is due. */
  #look: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number, expired: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#expired = expired;
  }

  /** Runs the timer, counting from now, or stops it. A timeout of 0 (a library caller's) never runs. */
  set(on: boolean): void {
    this.#running = on;
    if (!on || !(this.#timeoutMs > 0)) return;
    this.#quietSince = performance.now();
    this.#look ??= this.#lookIn(this.#timeoutMs);
  }

  /** Bytes came or went: the quiet starts again. */
  touch(): void {
    this.#quietSince = performance.now();
  }

  /** Stops the timer for good (the connection closed). */
  close(): void {
    this.#running = false;
    clearTimeout(this.#look);
    this.#look = undefined;
  }

  #lookIn(ms: number): NodeJS.Timeout {
    const look = setTimeout(this.#lookNow, ms);
    look.unref();
    return look;
  }

  readonly #lookNow = (): void => {
    this.#look = undefined;
    if (!this.#running) return;
    const quiet = performance.now() - this.#quietSince;
    if (quiet < this.#timeoutMs) this.#look = this.#lookIn(Math.ceil(this.#timeoutMs - quiet));
    else this.#expired();
  };
}
