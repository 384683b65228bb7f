/**
 * How many connections a large download runs over, decided from what it measures: unless one connection keeps
 * the process too busy for more to pay, it goes on as many as the fixed default and opens more only while each
 * step up raises the throughput it measures, as a
 * per-connection cap or a long round trip rewards more connections and a full link does not. Pure rules, fed
 * numbers: the I/O that opens and closes the connections is `ranged.ts`.
 */

/** The most connections one file is fetched over when nobody fixed the number. */
export const DEFAULT_MAX_CONNECTIONS = 32;

/**
 * Connections a large file is fetched over unless told otherwise, and those the measured number (`'auto'`)
 * starts from: a ramp from one connection cost more than it gained on the capped links measured, its first steps
 * being the slowest. Where one connection already keeps this process busy (a link it fills faster than the
 * process takes bytes: loopback, a fast LAN), `auto` holds at one after a short look (see `moreConnectionsCanPay`).
 */
export const DEFAULT_CONNECTIONS = 8;
/** How long each number of connections is measured before the next step is decided. */
export const DEFAULT_WINDOW_MS = 300;
/**
 * Doubling the connections must raise the throughput by at least this share of what it had (a proportional
 * share for a smaller step): on a per-connection cap a doubling nearly doubles it, on a full link it gains
 * nothing, and noise on a loaded machine stays well below 30 % over a window.
 */
export const DEFAULT_MIN_GAIN = 0.3;

/**
 * Whether more connections can pay, from the share of a look at one connection's first bytes during which this
 * process's thread was busy (its event loop's utilization). A thread busy a share `u` of the time carries at most
 * `1 / u` times what it carries now, whatever the link: when that is short of the gain a doubling must show
 * (`minGain`), opening more only adds their cost. Over loopback one connection keeps the thread 85-100 % busy;
 * behind a 40 MiB/s per-connection cap, 3-6 %.
 */
export function moreConnectionsCanPay(utilization: number, minGain: number = DEFAULT_MIN_GAIN): boolean {
  return utilization < 1 / (1 + minGain);
}

/**
 * A thread busy less than this share of a look at one connection is plainly waiting on the link (a slow or capped
 * one: 3-13 % behind a 40 MiB/s per-connection cap), and the first step's connections open at once. Between this
 * and what `moreConnectionsCanPay` allows, the thread is busy enough that the wait may be the other end's (a server
 * that one connection keeps busy: 70-77 % over loopback here, when a look reads under the bar): more connections are
 * then opened one step at a time from one, each kept only when it paid.
 */
export const WAITING_SHARE = 0.3;

/** What a look at one connection says: hold at one for good, step up from one by measurements, or open the first step. */
export type LookDecision = 'hold' | 'step' | 'open';

/** A step whose connections each added at least this share of what the ones before carried is grown by four. */
const NEAR_FULL_SHARE = 0.8;

/** What the controller says after a measurement: open more connections, or keep those it settled on. */
export type ConnectionDecision = 'grow' | 'hold';

/** Options of `ConnectionController`. */
export interface ConnectionControllerOptions {
  /** The most connections it may open (at least 1). */
  max?: number | undefined;
  /** The connections of the first step (1 unless given; at most `max`). */
  initial?: number | undefined;
  /** See `DEFAULT_MIN_GAIN`. */
  minGain?: number | undefined;
}

/**
 * The decision rule: starts at `initial` connections (one unless given); each measurement of the current number
 * is compared with the one before it. A step up that gained enough is kept and the number doubles again (quadruples when the step gained
 * nearly in proportion; capped at `max`); a step that did not settles back on the number before it, for good.
 * Settled, it holds.
 */
export class ConnectionController {
  readonly #max: number;
  readonly #minGain: number;
  #connections = 1;
  #settled: boolean;
  /** True once it settled by a measurement of its own (not because nothing was left to split). */
  #decided = false;
  /** The most connections a measured step showed to pay (a step up that gained enough). */
  #proven: number | undefined;
  #before: { connections: number; throughput: number } | undefined;

  constructor(options: ConnectionControllerOptions = {}) {
    this.#max = Math.max(1, Math.floor(options.max ?? DEFAULT_MAX_CONNECTIONS));
    this.#minGain = options.minGain ?? DEFAULT_MIN_GAIN;
    this.#connections = Math.min(this.#max, Math.max(1, Math.floor(options.initial ?? 1)));
    this.#settled = this.#connections >= this.#max;
  }

  /** The connections to run now. */
  get connections(): number {
    return this.#connections;
  }

  /** True once it holds for good. */
  get settled(): boolean {
    return this.#settled;
  }

  /**
   * What its measurements showed, worth keeping for the next download: the number it settled on by measuring, or,
   * still growing, the most connections a step up showed to pay; undefined when nothing was compared.
   */
  get measured(): number | undefined {
    return this.#decided ? this.#connections : this.#proven;
  }

  /** Fed the throughput (bytes a second) measured over `connections`; says whether to open more. */
  observe(throughput: number): ConnectionDecision {
    if (this.#settled) return 'hold';
    const before = this.#before;
    let factor = 2;
    if (before !== undefined) {
      const step = (this.#connections - before.connections) / before.connections;
      const gain = throughput / before.throughput - 1;
      if (!(gain >= this.#minGain * step)) {
        // The added connections did not pay for themselves: back to the number before them, or to twice that
        // after a step by four that gained what a doubling must (the link filled somewhere in between).
        const doubled = before.connections * 2;
        this.#connections =
          doubled < this.#connections && gain >= this.#minGain ? doubled : before.connections;
        this.#settled = true;
        this.#decided = true;
        return 'hold';
      }
      this.#proven = this.#connections;
      // Each connection added carried nearly its share (a per-connection cap): the link is far from full, so
      // the next step is four times as many, reaching 32 in three steps instead of five.
      if (gain >= NEAR_FULL_SHARE * step) factor = 4;
    }
    if (this.#connections >= this.#max) {
      // Measured at the most it may open, and it still paid.
      this.#settled = true;
      this.#decided = before !== undefined;
      return 'hold';
    }
    this.#before = { connections: this.#connections, throughput };
    this.#connections = Math.min(this.#max, this.#connections * factor);
    return 'grow';
  }

  /**
   * Fed the share of a look at one connection during which this process's thread was busy, before the first
   * step opens more: 'hold' at one for good when more cannot pay (see `moreConnectionsCanPay`); 'step' up from
   * one, each step measured as `observe` says, when the thread was busy but not that busy (see `WAITING_SHARE`);
   * else 'open' the connections of the first step.
   */
  observeBusy(utilization: number): LookDecision {
    if (this.#settled || utilization < WAITING_SHARE) return 'open';
    this.#connections = 1;
    if (moreConnectionsCanPay(utilization, this.#minGain)) return 'step';
    this.#settled = true;
    this.#decided = true;
    return 'hold';
  }

  /** Stops adapting at the current number (nothing is left to split). */
  settle(): void {
    this.#settled = true;
  }
}

/**
 * The throughput of one measurement window: started once every connection of a step carries bytes (a new
 * connection's round trip would otherwise count against it), read once `windowMs` have passed.
 */
export class ThroughputWindow {
  #startMs: number | undefined;
  #startBytes = 0;

  constructor(readonly windowMs: number = DEFAULT_WINDOW_MS) {}

  /** True while a window is open. */
  get open(): boolean {
    return this.#startMs !== undefined;
  }

  /** Opens a window at `nowMs`, when `bytes` had been received. */
  start(nowMs: number, bytes: number): void {
    this.#startMs = nowMs;
    this.#startBytes = bytes;
  }

  /**
   * Bytes a second since the window opened, once it is at least `windowMs` long; undefined before (and with no
   * window open). Reading a throughput closes the window.
   */
  read(nowMs: number, bytes: number): number | undefined {
    if (this.#startMs === undefined) return undefined;
    const elapsed = nowMs - this.#startMs;
    if (elapsed < this.windowMs || elapsed <= 0) return undefined;
    this.#startMs = undefined;
    return ((bytes - this.#startBytes) * 1000) / elapsed;
  }
}
