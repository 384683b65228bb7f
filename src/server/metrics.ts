/**
 * The server's metrics in the Prometheus text format (`/metrics`), made with prom-client on a registry of each
 * server's own (two servers in one process keep two sets). Label values are few and fixed: a route template, a
 * method, a status class, a backend and its operation, an outcome; never a file path, a key or a client address.
 * The pending uploads are read from the shared index at each scrape, so every server of a service says the same.
 */
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type Registry as PromRegistry,
  Registry,
} from 'prom-client';
import type { Breaker } from './breaker.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore } from './objects/object-store.js';
import type { Turns } from './turns.js';

/** What the scrape asks of the index may take this long; past it the pending-upload gauges keep their last value. */
const SCRAPE_INDEX_TIMEOUT_MS = 2_000;

/** Seconds: from a cached query (a millisecond) to a stalled backend (the breaker's 3 s bound and beyond). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Methods of the store and the index that are not calls to the backend worth timing. */
const UNTIMED = new Set(['close', 'constructor']);

/** prom-client's process gauges that end in `_total`, the counters' suffix. */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The Content-Type of the text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One request, as the metrics see it. */
export interface RequestSample {
  route: string;
  method: string;
  /** The status logged: 499 for a request whose connection closed before its answer ended. */
  status: number;
  durationMs: number;
  /** Body bytes of an object GET handed to the connection. */
  objectBytes?: number | undefined;
  /** Who ended the connection before the answer was complete: the client, or the server's stop. */
  aborted?: 'client' | 'stop' | undefined;
}

/** What the gauges read at each scrape. */
export interface MetricSources {
  index: MetadataIndex;
  breaker: Breaker;
  turns: Turns;
  draining: () => boolean;
}

/** The metrics of one server. */
export class ServerMetrics {
  // Declared in the order a scrape lists them: prom-client writes metrics in the order they were registered.
  readonly registry: PromRegistry = new Registry();
  readonly #requests: Counter<'route' | 'method' | 'status_class'> = new Counter({
    name: 'mission_data_http_requests_total',
    help: 'Requests answered, by route template, method and status class.',
    labelNames: ['route', 'method', 'status_class'],
    registers: [this.registry],
  });
  readonly #duration: Histogram<'route' | 'method' | 'status_class'> = new Histogram({
    name: 'mission_data_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer ending, by route template, method and status class.',
    labelNames: ['route', 'method', 'status_class'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #aborted: Counter<'route' | 'method' | 'cause'> = new Counter({
    name: 'mission_data_http_requests_aborted_total',
    help: 'Requests whose connection closed before their answer ended (counted as 499), by route template, method and cause: the client went away, or the server stopped.',
    labelNames: ['route', 'method', 'cause'],
    registers: [this.registry],
  });
  readonly #objectBytes: Counter<'route'> = new Counter({
    name: 'mission_data_object_bytes_sent_total',
    help: 'Object bytes the object routes of a folder store handed to connections.',
    labelNames: ['route'],
    registers: [this.registry],
  });
  readonly #backendDuration: Histogram<'backend' | 'operation'> = new Histogram({
    name: 'mission_data_backend_call_duration_seconds',
    help: 'Calls of the store and the index, by backend and operation.',
    labelNames: ['backend', 'operation'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #backendErrors: Counter<'backend' | 'operation'> = new Counter({
    name: 'mission_data_backend_call_errors_total',
    help: 'Calls of the store and the index that failed, by backend and operation.',
    labelNames: ['backend', 'operation'],
    registers: [this.registry],
  });
  readonly #confirmations: Counter<'outcome'> = new Counter({
    name: 'mission_data_upload_confirmations_total',
    help: 'Uploads to the store settled by this server: confirmed, released (never came, or refused), or lost to another confirmer.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly #inFlight: Gauge = new Gauge({
    name: 'mission_data_http_requests_in_flight',
    help: 'Requests being answered now.',
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    for (const outcome of ['confirmed', 'released', 'lost']) this.#confirmations.inc({ outcome }, 0);
    registerPendingGauges(this.registry, sources.index);
    registerStateGauges(this.registry, sources);
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` rejects; their unsuffixed twins stay.
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  /** A request began. */
  started(): void {
    this.#inFlight.inc();
  }

  /** A request ended (answered, or its connection closed). */
  ended(sample: RequestSample): void {
    this.#inFlight.dec();
    const labels = { route: sample.route, method: sample.method, status_class: statusClass(sample.status) };
    this.#requests.inc(labels);
    this.#duration.observe(labels, sample.durationMs / 1000);
    if (sample.aborted) {
      this.#aborted.inc({ route: sample.route, method: sample.method, cause: sample.aborted });
    }
    if (sample.objectBytes) this.#objectBytes.inc({ route: sample.route }, sample.objectBytes);
  }

  /** The text of a scrape. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The store, each call timed and its failures counted (`close` is not a call worth timing). */
  store<T extends ObjectStore>(store: T): T {
    return this.#timed(store, 'store');
  }

  /** The index, each call timed and its failures counted; confirmations and releases counted by outcome. */
  index<T extends MetadataIndex>(index: T): T {
    const timed = this.#timed(index, 'index');
    const confirmations = this.#confirmations;
    return new Proxy(timed, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'confirm' && typeof value === 'function') {
          return async (...args: unknown[]) => {
            const won = (await (value as (...a: unknown[]) => Promise<boolean>)(...args)) === true;
            confirmations.inc({ outcome: won ? 'confirmed' : 'lost' });
            return won;
          };
        }
        if (property === 'release' && typeof value === 'function') {
          return async (...args: unknown[]) => {
            await (value as (...a: unknown[]) => Promise<void>)(...args);
            confirmations.inc({ outcome: 'released' });
          };
        }
        return value;
      },
    });
  }

  /**
   * `backend` with each method that returns a promise timed. Methods are called on the backend itself, not the
   * proxy, so classes with private fields keep working; optional capabilities stay visible (`in` and `get` pass).
   */
  #timed<T extends object>(backend: T, name: 'store' | 'index'): T {
    const duration = this.#backendDuration;
    const errors = this.#backendErrors;
    return new Proxy(backend, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function' || typeof property !== 'string' || UNTIMED.has(property)) {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (...args: unknown[]) => {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (!(result instanceof Promise)) return result;
          const labels = { backend: name, operation: property };
          const stop = duration.startTimer(labels);
          return result.then(
            (settled: unknown) => {
              stop();
              return settled;
            },
            (error: unknown) => {
              stop();
              errors.inc(labels);
              throw error;
            },
          );
        };
      },
    });
  }
}

/** The pending uploads of the shared index, read at each scrape. */
function registerPendingGauges(registry: PromRegistry, index: MetadataIndex): void {
  // One look at the index per scrape feeds both gauges: the count first, then the oldest age from the same look.
  let pending: readonly { reservedAtMs: number }[] | undefined;
  new Gauge({
    name: 'mission_data_pending_uploads',
    help: 'Names reserved for uploads not yet confirmed, in the shared index (every server of a service agrees).',
    registers: [registry],
    async collect() {
      pending = await withTimeout(index.pending(), SCRAPE_INDEX_TIMEOUT_MS);
      if (pending !== undefined) this.set(pending.length);
    },
  });
  new Gauge({
    name: 'mission_data_pending_upload_oldest_age_seconds',
    help: 'Age of the oldest reservation not yet confirmed (0 with none).',
    registers: [registry],
    collect() {
      if (pending === undefined) return;
      const oldest = Math.min(...pending.map((reservation) => reservation.reservedAtMs));
      this.set(pending.length === 0 ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
    },
  });
}

/** The server's own state, read at each scrape: the upload turns, the backends and the breaker, draining. */
function registerStateGauges(registry: PromRegistry, sources: MetricSources): void {
  const registers = [registry];
  new Gauge({
    name: 'mission_data_upload_turns_waiting',
    help: 'Requests to /upload waiting for their turn.',
    registers,
    collect() {
      this.set(sources.turns.waiting);
    },
  });
  new Gauge({
    name: 'mission_data_backend_up',
    help: "1 while the breaker's probes find the backend answering, 0 while they do not.",
    labelNames: ['backend'],
    registers,
    collect() {
      const report = sources.breaker.outage?.report;
      this.set({ backend: 'store' }, report && !report.store.ok ? 0 : 1);
      this.set({ backend: 'index' }, report && !report.index.ok ? 0 : 1);
    },
  });
  new Gauge({
    name: 'mission_data_breaker_open',
    help: 'Whether the breaker answers the API 503 because a backend does not answer (1) or not (0).',
    registers,
    collect() {
      this.set(sources.breaker.outage ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mission_data_draining',
    help: 'Whether the server is draining before it stops (1) or serving (0).',
    registers,
    collect() {
      this.set(sources.draining() ? 1 : 0);
    },
  });
}

/** `2xx`, `4xx`, `5xx`: few label values, whatever the status. */
function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolvePromise) => {
    timer = setTimeout(() => resolvePromise(undefined), ms);
  });
  try {
    return await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
