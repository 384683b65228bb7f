/**
 * The circuit breaker in front of the API routes, in the manner of a load balancer's health checks: once a probe
 * of the store or the index failed, every API request is answered 503 at once (with `Retry-After`), and a probe
 * in the background closes the breaker again as soon as both answer. A request under way when a backend froze
 * is not left waiting on it: while it runs the backends are probed, and the breaker opening ends its wait.
 */
import { type HealthReport, healthOf, PROBE_TIMEOUT_MS } from './health.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore } from './objects/object-store.js';

/** What does not answer, since when. */
export interface Outage {
  /** The failing parts' problems, one line naming no credential. */
  problem: string;
  /** When the first probe that failed started (epoch ms): the backend has not answered since. */
  sinceMs: number;
  /** The latest report of a probe, which `/health` answers while the breaker is open. */
  report: HealthReport;
}

/** Timings of the breaker, in milliseconds; the defaults bound any request's wait on a frozen backend to 3.3 s. */
export interface BreakerTimings {
  /** How long a probe may take (3 s). */
  probeTimeoutMs?: number;
  /** How long a request runs before the backends are probed, and again after each probe that passed (300 ms). */
  suspectAfterMs?: number;
  /** The pause between background probes while the breaker is open (500 ms). */
  reprobeMs?: number;
}

/** Told when the breaker opens (with what fails) and closes again (with the outage that ended). */
export type BreakerListener = (change: { opened: Outage } | { closed: Outage }) => void;

/** The answer a request gets while the breaker is open, thrown by `guard`. */
export class BackendUnavailable extends Error {
  override name = 'BackendUnavailable';
  constructor(readonly outage: Outage) {
    super(outage.problem);
  }
}

/** How long ago, in words: "under 1 s", "12 s", "3 min 5 s". */
export function durationWords(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return 'under 1 s';
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${seconds % 60} s`;
}

/** The breaker of one server; `stop()` ends its background probes. */
export class Breaker {
  readonly #store: ObjectStore;
  readonly #index: MetadataIndex;
  readonly #probeTimeoutMs: number;
  readonly #suspectAfterMs: number;
  readonly #reprobeMs: number;
  #outage: Outage | undefined;
  #probing: Promise<HealthReport> | undefined;
  /** The requests under way, each told when the breaker opens. */
  readonly #waiting = new Set<(outage: Outage) => void>();
  #reprobe: NodeJS.Timeout | undefined;
  #stopped = false;

  readonly #onChange: BreakerListener | undefined;

  constructor(
    store: ObjectStore,
    index: MetadataIndex,
    timings: BreakerTimings = {},
    onChange?: BreakerListener,
  ) {
    this.#onChange = onChange;
    this.#store = store;
    this.#index = index;
    this.#probeTimeoutMs = timings.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
    this.#suspectAfterMs = timings.suspectAfterMs ?? 300;
    this.#reprobeMs = timings.reprobeMs ?? 500;
  }

  /** What does not answer now; undefined while the breaker is closed. */
  get outage(): Outage | undefined {
    return this.#outage;
  }

  /** Probes both backends, or joins the probe under way; its outcome opens or closes the breaker. */
  probe(): Promise<HealthReport> {
    const started = Date.now();
    this.#probing ??= healthOf(this.#store, this.#index, this.#probeTimeoutMs).then((report) => {
      this.#probing = undefined;
      this.#settle(report, started);
      return report;
    });
    return this.#probing;
  }

  /**
   * Runs `work` while both backends answer: rejects with `BackendUnavailable` at once when the breaker is open,
   * or as soon as it opens while `work` runs (whose outcome is then dropped).
   */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    if (this.#outage) throw new BackendUnavailable(this.#outage);
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const suspect = () => {
      timer = setTimeout(() => {
        void this.probe().then(() => {
          if (!done && !this.#outage) suspect();
        });
      }, this.#suspectAfterMs);
      timer.unref();
    };
    suspect();
    // The executor runs at once, so `cutOff` is set before it is used.
    let cutOff!: (outage: Outage) => void;
    const cut = new Promise<never>((_, reject) => {
      cutOff = (outage) => reject(new BackendUnavailable(outage));
    });
    this.#waiting.add(cutOff);
    const running = Promise.resolve().then(work);
    try {
      return await Promise.race([running, cut]);
    } finally {
      done = true;
      clearTimeout(timer);
      this.#waiting.delete(cutOff);
      // The work of a request answered 503 may still fail later; nobody waits for it.
      running.catch(() => undefined);
    }
  }

  /** Stops probing in the background. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#reprobe);
  }

  #settle(report: HealthReport, startedMs: number): void {
    const failing = [report.store, report.index].filter((part) => !part.ok);
    if (failing.length === 0) {
      const ended = this.#outage;
      this.#outage = undefined;
      if (ended) this.#onChange?.({ closed: ended });
      return;
    }
    const problem = failing.map((part) => part.problem).join(' ');
    const opening = this.#outage === undefined;
    this.#outage = { problem, sinceMs: this.#outage?.sinceMs ?? startedMs, report };
    if (opening) {
      this.#onChange?.({ opened: this.#outage });
      for (const tell of this.#waiting) tell(this.#outage);
    }
    if (!this.#stopped) {
      clearTimeout(this.#reprobe);
      this.#reprobe = setTimeout(() => void this.probe(), this.#reprobeMs);
      this.#reprobe.unref();
    }
  }
}
