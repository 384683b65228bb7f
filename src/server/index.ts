/**
 * The embedded reference server (`mission-data/server`): the whole service (pre-signing, object store,
 * downloads, query) in-process. Starting one is a few steps, each in a file of its own: check the options
 * (`options.ts`), open the store and the index (`backends.ts`), make the routes' context (`build-context.ts`)
 * and the handler of requests (`request-handler.ts`), listen (`http-server.ts`); `shutdown.ts` stops it.
 * What it exports is the package's promise: test/server/public-api.test.ts lists every name.
 */
import { closeBackends, openBackends, type ReindexReport, reindex } from './backends.js';
import { buildContext } from './build-context.js';
import { httpServer, listen, networkLoss, serverUrl } from './http-server.js';
import { checkOptions, type ReferenceServerOptions } from './options.js';
import { requestHandler } from './request-handler.js';
import { PendingWork, Shutdown } from './shutdown.js';

export type { ChecksumAlgorithm } from '../core/checksum.js';
export {
  type ErrorCode,
  type ErrorOptions,
  type ExitCodeValue,
  MissionDataError,
  StoreError,
  UsageError,
} from '../core/errors.js';
export type { BackendOptions, ReindexReport } from './backends.js';
export { isBucketStore } from './backends.js';
export type { Dialect } from './context.js';
export { isStoreEmpty, writeDemoArchive } from './demo-archive.js';
export type { AmzChecksum, FaultOptions } from './faults.js';
export type { ReferenceServerOptions, ServingOptions, StoreLocation } from './options.js';
export type { RequestLogEntry } from './request-handler.js';
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
  /** Stops listening, ends every connection and waits for interrupted uploads to be cleaned up. */
  close(): Promise<void>;
}

/** Starts the reference server on a store (a folder, or a bucket URL); resolves once it listens. */
export async function startReferenceServer(options: ReferenceServerOptions): Promise<ReferenceServer> {
  const settings = checkOptions(options);
  const backends = await openBackends({ ...options, store: settings.store });
  let objectCount: number;
  try {
    objectCount = await backends.index.count();
  } catch (error) {
    await closeBackends(backends);
    throw error;
  }
  const work = new PendingWork();
  let url = '';
  const context = buildContext(backends, options, settings, () => url, work);
  const server = httpServer(options.tls, requestHandler(context, options.log));
  let port: number;
  try {
    port = await listen(server, settings.port, settings.host);
  } catch (error) {
    await closeBackends(backends);
    throw error;
  }
  url = serverUrl(settings.scheme, settings.host, port);
  context.uploads?.start(options.confirmIntervalMs);
  const shutdown = new Shutdown(server, work, context.uploads, backends, context.breaker);
  context.faults.interrupt = networkLoss(server, port, settings.host, () => shutdown.started);
  return {
    url,
    port,
    store: backends.store.location,
    storeDir: backends.store.location,
    indexLocation: backends.index.location,
    objectCount,
    reindex: () => reindex(backends.store, backends.index),
    close: () => shutdown.close(),
  };
}
