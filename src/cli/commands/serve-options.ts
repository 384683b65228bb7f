/** The options of `serve`, as its declaration (`../declarations/serve.ts`) gives them. */
import type { Dialect, WireMode } from '../../server/index.js';

/** Options of `serve`, as its declaration (`../declarations/serve.ts`) gives them. */
export interface ServeCommandOptions {
  port: number;
  host: string;
  /** A folder, or a backend's URL (`s3://BUCKET[/PREFIX]`), as given: the server decides which. */
  store: string;
  /** Add records for objects in the store that have none, once serving. */
  reindex?: boolean | undefined;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  apiKey?: string[] | undefined;
  /** Bearer tokens for `/authorized/` routes. */
  token?: string[] | undefined;
  wire: WireMode;
  /** Which service to play; `both` when not given. */
  dialect?: Dialect | undefined;
  demo?: boolean | undefined;
  /** Seconds the pre-signed URLs handed out stay valid (short-lived URLs, for trying expiry). */
  urlLife?: number | undefined;
  /** How many `/upload` requests are worked on at once (`--upload-concurrency`). */
  uploadConcurrency?: number | undefined;
  /** False with `--no-metrics`. */
  metrics?: boolean | undefined;
  /** `/metrics` on a port of its own (`--metrics-port`, or MISSION_DATA_METRICS_PORT). */
  metricsPort?: number | undefined;
  /** The bearer token `/metrics` needs (`--metrics-token`, or MISSION_DATA_METRICS_TOKEN). */
  metricsToken?: string | undefined;
  /** `human` (the default) or `json` (`--log-format`, or MISSION_DATA_LOG_FORMAT). */
  logFormat?: 'human' | 'json' | undefined;
  /** Seconds a drain on a closing signal lets the requests under way finish (`--drain-timeout`). */
  drainTimeout?: number | undefined;
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
}

/**
 * The values of the backends' own flags (`--s3-endpoint`, `--index`), by the names commander gives them: handed to
 * the server as they are, which reads them by the settings its backends declare.
 */
export type BackendFlagValues = Readonly<Record<string, unknown>>;
