/**
 * The embedded reference server (`mission-data/server`): the whole service (pre-signing, object store,
 * downloads, query) in-process. Starting one is a few steps, each in a file of its own: check the options
 * (`options.ts`), open the store and the index of the backends their locations name (`backends.ts`), make the
 * routes' context (`build-context.ts`) and the handler of requests (`request-handler.ts`), listen
 * (`http-server.ts`); `shutdown.ts` stops it.
 * What it exports is the package's promise: test/server/public-api.test.ts lists every name.
 */
import type { Server } from 'node:http';
import { type Backends, closeBackends, openBackends, type ReindexReport, reindex } from './backends.js';
import { buildContext } from './build-context.js';
import { Connections } from './connections.js';
import type { ServerContext } from './context.js';
import { httpServer, listen, networkLoss, serverUrl } from './http-server.js';
import { metricsServer, ServerMetrics } from './metrics-server.js';
import { checkOptions, type ReferenceServerOptions, type ServerSettings } from './options.js';
import { requestHandler } from './request-handler.js';
import { type DrainReport, PendingWork, Requests, Shutdown } from './shutdown.js';

export type { ChecksumAlgorithm } from '../core/checksums/checksum.js';
export {
  type ErrorCode,
  type ErrorOptions,
  type ExitCodeValue,
  MissionDataError,
  StoreError,
  UsageError,
} from '../core/errors.js';
export type { StoreSettings } from './backend-registry.js';
export type { BackendOptions, ReindexReport } from './backends.js';
export { isBucketStore } from './backends.js';
export type { Dialect } from './context.js';
export { isStoreEmpty, writeDemoArchive } from './demo-archive.js';
export type { AmzChecksum, FaultOptions } from './faults.js';
export type { S3Settings } from './objects/s3-backend.js';
export type { ReferenceServerOptions, ServerEvent, ServingOptions, StoreLocation } from './options.js';
export type { RequestLogEntry } from './request-handler.js';
export type { DrainReport } from './shutdown.js';
export type { WireMode } from './wire.js';

/** A running reference server. */
export interface ReferenceServer {
  /**
   * Where to reach it, e.g. `http://127.0.0.1:8080` (no trailing slash); loopback when it binds every interface
   * (`0.0.0.0`, `::`).
   */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Where the store is: its folder, symlinks resolved, or its URL (`s3://BUCKET/PREFIX`). */
  store: string;
  /** @deprecated The same as `store`, by its former name (it may hold a URL); it goes in a later release. */
  storeDir: string;
  /** Where the index is (`memory`, or the database URL with its password masked). */
  indexLocation: string;
  /** Number of objects in the metadata index when the server started. */
  readonly objectCount: number;
  /** Adds a record for every object in the store that passes the naming rules and has none; serving goes on. */
  reindex(): Promise<ReindexReport>;
  /** Where `/metrics` is answered (`<url>/metrics`, or on its own port); undefined when metrics are off. */
  metricsUrl: string | undefined;
  /** Stops listening, ends every connection and waits for interrupted uploads to be cleaned up. */
  close(): Promise<void>;
  /**
   * Drains, then closes: new requests are answered 503 (`Retry-After`, `Connection: close`) and `/health` says
   * `draining`, while the requests under way finish within `boundMs` (the `drainTimeoutMs` option by default);
   * whatever still runs then is cut off as by `close()`.
   */
  drain(boundMs?: number): Promise<DrainReport>;
}

/** Starts the reference server on a store (a folder, or a bucket URL); resolves once it listens. */
export async function startReferenceServer(options: ReferenceServerOptions): Promise<ReferenceServer> {
  const settings = checkOptions(options);
  const backends = await openBackends({ ...options, store: settings.store });
  const objectCount = await countObjects(backends);
  const work = new PendingWork();
  const requests = new Requests();
  let url = '';
  const { metrics, served } = measured(backends, options.metrics ?? true, requests, () => context);
  const context = buildContext(served, options, settings, () => url, work);
  const metricsHere = metrics !== undefined && options.metricsPort === undefined;
  const server = httpServer(
    options.tls,
    requestHandler(context, {
      log: options.log,
      metrics,
      metricsHere,
      metricsToken: options.metricsToken,
      requests,
    }),
  );
  const connections = new Connections(server, Boolean(options.tls));
  const listening = await listenAll(server, metrics, options, settings, backends);
  const { port, extraServers } = listening;
  url = serverUrl(settings.scheme, settings.host, port);
  const metricsUrl = metricsHere ? `${url}/metrics` : listening.metricsUrl;
  context.uploads?.start(options.confirmIntervalMs);
  const shutdown = new Shutdown({
    server,
    extraServers,
    connections,
    requests,
    work,
    uploads: context.uploads,
    breaker: context.breaker,
    backends,
  });
  context.faults.interrupt = networkLoss(server, port, settings.host, () => shutdown.started);
  return {
    url,
    port,
    store: backends.store.location,
    storeDir: backends.store.location,
    indexLocation: backends.index.location,
    objectCount,
    reindex: () => reindex(backends.store, backends.index),
    metricsUrl,
    close: () => shutdown.close(),
    drain: (boundMs = settings.drainTimeoutMs) => {
      if (!requests.draining) {
        options.onEvent?.({ event: 'draining', running: requests.running, boundMs });
      }
      return shutdown.drain(boundMs);
    },
  };
}

/** The objects the index holds at the start; the backends closed when the index cannot say. */
async function countObjects(backends: Backends): Promise<number> {
  try {
    return await backends.index.count();
  } catch (error) {
    await closeBackends(backends);
    throw error;
  }
}

/**
 * The server's metrics, with the backends the routes are to use, each call of theirs timed (the backends as
 * they are with metrics off). The gauges read the index, the requests under way and, at each scrape, the
 * routes' context (made after) for the breaker and the upload turns.
 */
function measured(
  backends: Backends,
  keepMetrics: boolean,
  requests: Requests,
  context: () => ServerContext,
): { metrics: ServerMetrics | undefined; served: Backends } {
  if (!keepMetrics) return { metrics: undefined, served: backends };
  const metrics = new ServerMetrics({
    index: backends.index,
    get breaker() {
      return context().breaker;
    },
    get turns() {
      return context().uploadTurns;
    },
    draining: () => requests.draining,
  });
  const served = { ...backends, store: metrics.store(backends.store), index: metrics.index(backends.index) };
  return { metrics, served };
}

/**
 * Listens on the API's port and, when asked, `/metrics` on its own one; on a failure to listen closes what
 * already listens and the backends.
 */
async function listenAll(
  server: Server,
  metrics: ServerMetrics | undefined,
  options: ReferenceServerOptions,
  settings: ServerSettings,
  backends: Backends,
): Promise<{ port: number; extraServers: Server[]; metricsUrl: string | undefined }> {
  const extraServers: Server[] = [];
  try {
    const port = await listen(server, settings.port, settings.host);
    if (!metrics || options.metricsPort === undefined) return { port, extraServers, metricsUrl: undefined };
    const extra = metricsServer(metrics, options.metricsToken);
    extraServers.push(extra);
    const metricsPort = await listen(extra, options.metricsPort, settings.host);
    return { port, extraServers, metricsUrl: `${serverUrl('http', settings.host, metricsPort)}/metrics` };
  } catch (error) {
    server.close();
    for (const extra of extraServers) extra.close();
    await closeBackends(backends);
    throw error;
  }
}
