/** What `startReferenceServer` is asked for: its options, and the checks and defaults it starts from. */
import { UsageError } from '../core/errors.js';
import type { StoreSettings } from './backend-registry.js';
import type { BackendOptions } from './backends.js';
import { DIALECTS, type Dialect } from './context.js';
import type { FaultOptions } from './faults.js';
import type { RequestLogEntry } from './request-handler.js';
import { DEFAULT_UPLOAD_CONCURRENCY } from './turns.js';
import { WIRE_MODES, type WireMode } from './wire.js';

/** Options of `startReferenceServer`: where the store is (`store`), and how to serve it. */
export type ReferenceServerOptions = StoreLocation & ServingOptions;

/** Where the store is: `store`, or `storeDir`, its deprecated name; never both. */
export type StoreLocation =
  | {
      /**
       * The store: a folder path (the folder is created when missing; objects are files at their storage key
       * below it), or a store URL, an S3 bucket `s3://BUCKET[/PREFIX]` (objects at their storage key below the
       * prefix, served by the store itself).
       */
      store: string;
      /** @deprecated Renamed `store`; give only `store`. */
      storeDir?: undefined;
    }
  | {
      store?: undefined;
      /**
       * The store folder or store URL, as `store` takes it.
       * @deprecated Renamed `store`, as it may hold a bucket URL, not only a folder; accepted for one more
       * release. Giving both `store` and `storeDir` is refused.
       */
      storeDir: string;
    };

/** How to serve the store: every option of `startReferenceServer` but where the store is. */
export interface ServingOptions extends StoreSettings, Pick<BackendOptions, 'indexUrl'> {
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** Seconds an upload URL of a bucket store is valid (default one hour, as the real service). */
  uploadUrlLifetimeSeconds?: number | undefined;
  /** How long after its URL expired an upload that never arrived keeps its name reserved (default 15 min). */
  reservationGraceMs?: number | undefined;
  /** How often pending uploads to a bucket store are looked for (default 2 s). */
  confirmIntervalMs?: number | undefined;
  /** Called with errors of background work (confirming uploads). */
  onBackgroundError?: ((error: unknown) => void) | undefined;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Address to bind; loopback unless said otherwise. */
  host?: string;
  /** When set (non-empty), uploads and `/api-key/` routes need `X-api-key` equal to one of these. */
  apiKeys?: readonly string[] | undefined;
  /** Bearer tokens `/authorized/` routes accept; without any, those routes refuse every request. */
  tokens?: readonly string[] | undefined;
  /** Which service to play: `spec`, `today` or `both` (the default). */
  dialect?: Dialect;
  /** How API answers are put on the wire (default `envelope`). */
  wire?: WireMode;
  /** The secret pre-signed URLs are signed with; by default one kept in a dot-file of the store. */
  secret?: string | undefined;
  /** Called once per request. */
  log?: ((entry: RequestLogEntry) => void) | undefined;
  /**
   * How many `/upload` requests the server works on at once while it answers a query or a download (default 2;
   * with none to answer, up to 16); the others wait their turn, so a burst of uploads never holds up the reads
   * beside it. Past 1,000 waiting, an upload is answered 503.
   */
  uploadConcurrency?: number | undefined;
  /** An upload that sends no body bytes for this long is answered 408 and dropped (default 60 000 ms). */
  uploadIdleTimeoutMs?: number | undefined;
  /** Keep metrics and answer them at `/metrics` (default true). */
  metrics?: boolean | undefined;
  /** Answer `/metrics` on a port of its own (on `host`; 0 picks a free one), not on the API's port. */
  metricsPort?: number | undefined;
  /** A bearer token `/metrics` needs (`Authorization: Bearer <token>`); none by default. */
  metricsToken?: string | undefined;
  /** How long a drain (`drain()`, `serve` on SIGTERM, SIGHUP, Ctrl-C or Ctrl-Break) lets the requests under way finish (default 5 000 ms). */
  drainTimeoutMs?: number | undefined;
  /** Called with what happens to the server beside requests: a backend stops or starts answering, a drain. */
  onEvent?: ((event: ServerEvent) => void) | undefined;
  /** Fault modes: what S3 and real networks do that this server does not by default (see `faults.ts`). */
  faults?: FaultOptions | undefined;
}

/** What happens to a server beside its requests, for its log. */
export type ServerEvent =
  | { event: 'backend-down'; problem: string }
  | { event: 'backend-up'; downForMs: number }
  | { event: 'draining'; running: number; boundMs: number };

/** How long a drain waits for the requests under way, by default. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 5_000;

/** The options every server has a value of, checked, with their defaults filled in. */
export interface ServerSettings {
  /** The store's folder or URL. */
  store: string;
  /** How many `/upload` requests are worked on at once. */
  uploadConcurrency: number;
  port: number;
  host: string;
  wire: WireMode;
  dialect: Dialect;
  /** `https` with `tls`, `http` otherwise. */
  scheme: 'http' | 'https';
  drainTimeoutMs: number;
}

/** Checks the options before anything is opened, throwing at the first that is wrong, and fills in the defaults. */
export function checkOptions(options: ReferenceServerOptions): ServerSettings {
  const { port = 0, host = '127.0.0.1', wire = 'envelope', dialect = 'both' } = options;
  const store = storeOf(options);
  if (!WIRE_MODES.includes(wire)) {
    throw new UsageError(
      `Unknown wire mode ${JSON.stringify(wire)}; choose one of ${WIRE_MODES.join(', ')}.`,
    );
  }
  if (!DIALECTS.includes(dialect)) {
    throw new UsageError(`Unknown dialect ${JSON.stringify(dialect)}; choose one of ${DIALECTS.join(', ')}.`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`Invalid port ${port}: give a whole number from 0 to 65535.`);
  }
  if (options.secret !== undefined && options.secret.length < 16) {
    throw new UsageError('The signing secret must have at least 16 characters.');
  }
  const { uploadConcurrency = DEFAULT_UPLOAD_CONCURRENCY } = options;
  if (!Number.isSafeInteger(uploadConcurrency) || uploadConcurrency < 1) {
    throw new UsageError(
      `Invalid upload concurrency ${uploadConcurrency}: give a whole number of at least 1.`,
    );
  }
  const { drainTimeoutMs = DEFAULT_DRAIN_TIMEOUT_MS, metricsPort, metricsToken } = options;
  if (!Number.isFinite(drainTimeoutMs) || drainTimeoutMs < 0) {
    throw new UsageError(
      `Invalid drain timeout ${drainTimeoutMs}: give a number of milliseconds, 0 or more.`,
    );
  }
  if (
    metricsPort !== undefined &&
    (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)
  ) {
    throw new UsageError(`Invalid metrics port ${metricsPort}: give a whole number from 0 to 65535.`);
  }
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port && options.metrics !== false) {
    throw new UsageError(
      `The metrics port ${metricsPort} is the API's port: give /metrics a port of its own (0 picks a free one), or none to answer it on the API's port.`,
    );
  }
  if (metricsToken !== undefined && metricsToken.length < 8) {
    throw new UsageError('The metrics token must have at least 8 characters.');
  }
  return {
    store,
    port,
    host,
    wire,
    dialect,
    scheme: options.tls ? 'https' : 'http',
    uploadConcurrency,
    drainTimeoutMs,
  };
}

/** `storeDir` was given once in this process and said to be deprecated (as Node says each deprecation once). */
let warnedOfStoreDir = false;

/** The store's folder or URL, from `store` or from `storeDir` (its deprecated name); exactly one is needed. */
function storeOf(options: ReferenceServerOptions): string {
  const { store, storeDir } = options as { store?: unknown; storeDir?: unknown };
  if (store !== undefined && storeDir !== undefined) {
    throw new UsageError(
      'Give startReferenceServer `store` or `storeDir` (its deprecated name), not both: `store` alone will do.',
    );
  }
  if (storeDir !== undefined && !warnedOfStoreDir) {
    warnedOfStoreDir = true;
    process.emitWarning('startReferenceServer: `storeDir` is deprecated; give the store as `store`.', {
      type: 'DeprecationWarning',
      code: 'MISSION_DATA_STORE_DIR',
    });
  }
  const location = store ?? storeDir;
  if (typeof location !== 'string') {
    throw new UsageError(
      'Give startReferenceServer a `store`: a folder path, or a store URL such as s3://BUCKET[/PREFIX].',
    );
  }
  return location;
}
