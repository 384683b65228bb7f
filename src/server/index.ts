/** The embedded reference server: the whole service (pre-signing, object store, downloads, query) in-process. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type BackendOptions, openBackends, type ReindexReport, reindex } from './backends.js';
import { UploadConfirmer } from './confirmations.js';
import {
  type CredentialCheck,
  DIALECTS,
  type Dialect,
  requestTarget,
  type ServerContext,
} from './context.js';
import { type FaultOptions, Faults } from './faults.js';
import { healthOf, UNAVAILABLE_RETRY_AFTER_SECONDS, unavailablePart } from './health.js';
import { STREAM_BUFFER_BYTES } from './objects/folder-write.js';
import { confirmsUploads } from './objects/object-store.js';
import { URL_LIFETIME_SECONDS } from './objects/presign.js';
import { apiResponse } from './routes/api-routes.js';
import type { ObjectOutcome } from './routes/object-put-route.js';
import { handleObject, isObjectPath } from './routes/object-routes.js';
import { messageResponse, sendApiResponse, WIRE_MODES, type WireMode } from './wire.js';

export type { ReindexReport } from './backends.js';
export { isBucketStore } from './backends.js';
export type { Dialect } from './context.js';
export { DIALECTS } from './context.js';
export { demoFileNames, isStoreEmpty, writeDemoArchive } from './demo-archive.js';
export type { AmzChecksum, FaultOptions } from './faults.js';
export type { HealthReport } from './health.js';
export type { IndexQuery, MetadataIndex, MetadataRecord } from './metadata/metadata-index.js';
export { maskDatabaseUrl } from './metadata/postgres-failures.js';
export type { ObjectStore, StoredObject } from './objects/object-store.js';
export type { WireMode } from './wire.js';
export { WIRE_MODES } from './wire.js';

/** One request, as reported to `log` once its response is done (or the client went away). */
export interface RequestLogEntry {
  method: string;
  /** The request path; object routes drop their query string, which holds the URL's credentials. */
  path: string;
  status: number;
  durationMs: number;
  /** True when the connection closed before the response was complete. */
  aborted: boolean;
  /** Body bytes of an object GET handed to the connection (all of them unless `aborted`). */
  bytes?: number;
  /** The error behind a 500 answer, or behind a 507 or 500 to an upload the store could not take. */
  error?: unknown;
}

/** Options of `startReferenceServer`. */
export interface ReferenceServerOptions
  extends Pick<BackendOptions, 's3Endpoint' | 's3Region' | 's3Credentials' | 'indexUrl'> {
  /**
   * The store folder (created when missing; objects are files at their storage key below it), or an S3 bucket
   * `s3://BUCKET[/PREFIX]` (objects at their storage key below the prefix, served by the store itself).
   */
  storeDir: string;
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
  /** An upload that sends no body bytes for this long is answered 408 and dropped (default 60 000 ms). */
  uploadIdleTimeoutMs?: number | undefined;
  /** Fault modes: what S3 and real networks do that this server does not by default (see `faults.ts`). */
  faults?: FaultOptions | undefined;
}

/** A running reference server. */
export interface ReferenceServer {
  /**
   * Where to reach it, e.g. `http://127.0.0.1:8080` (no trailing slash); loopback when it binds every interface
   * (`0.0.0.0`, `::`).
   */
  url: string;
  /** The port it listens on. */
  port: number;
  /** The store folder, symlinks resolved (or the bucket, `s3://…`). */
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

const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The loopback address for a host that binds every interface (`0.0.0.0`, `::`), which no client can reach. */
function reachableHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === '0.0.0.0') return '127.0.0.1';
  if (bare === '::' || bare === '0:0:0:0:0:0:0:0') return '::1';
  return host;
}

/** Compares keys or tokens by their SHA-256 digests, in constant time, and checks every one so timing says nothing. */
function secretChecker(keys: readonly string[]): CredentialCheck {
  const digests = keys.map((key) => createHash('sha256').update(key).digest());
  return (given) => {
    if (given === undefined || given === '') return 'missing';
    const digest = createHash('sha256').update(given).digest();
    let accepted = false;
    for (const wanted of digests) accepted = timingSafeEqual(wanted, digest) || accepted;
    return accepted ? undefined : 'wrong';
  };
}

/** Starts the reference server on a store folder; resolves once it listens. */
export async function startReferenceServer(options: ReferenceServerOptions): Promise<ReferenceServer> {
  const { storeDir, port = 0, host = '127.0.0.1', wire = 'envelope', dialect = 'both', log } = options;
  if (!WIRE_MODES.includes(wire)) {
    throw new Error(`Unknown wire mode ${JSON.stringify(wire)}; choose one of ${WIRE_MODES.join(', ')}.`);
  }
  if (!DIALECTS.includes(dialect)) {
    throw new Error(`Unknown dialect ${JSON.stringify(dialect)}; choose one of ${DIALECTS.join(', ')}.`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid port ${port}: give a whole number from 0 to 65535.`);
  }
  if (options.secret !== undefined && options.secret.length < 16) {
    throw new Error('The signing secret must have at least 16 characters.');
  }
  const { store, index, signer } = await openBackends({ ...options, store: storeDir });
  const objectCount = await index.count();
  const uploads = confirmsUploads(store)
    ? new UploadConfirmer(store, index, options.onBackgroundError)
    : undefined;
  const scheme = options.tls ? 'https' : 'http';
  const pending = new Set<Promise<unknown>>();
  let url = '';
  const faults = new Faults(options.faults);

  const context: ServerContext = {
    store,
    index,
    signer,
    uploads,
    uploadUrlLifetimeSeconds: options.uploadUrlLifetimeSeconds ?? URL_LIFETIME_SECONDS.PUT,
    reservationGraceMs: options.reservationGraceMs ?? 15 * 60_000,
    wire,
    dialect,
    faults,
    checkApiKey: options.apiKeys && options.apiKeys.length > 0 ? secretChecker(options.apiKeys) : undefined,
    checkToken: options.tokens && options.tokens.length > 0 ? secretChecker(options.tokens) : undefined,
    baseUrl: (req) => {
      const hostHeader = req.headers.host;
      return hostHeader && HOST_HEADER.test(hostHeader) ? `${scheme}://${hostHeader}` : url;
    },
    track: (work) => {
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      pending.add(settled);
      void settled.then(() => pending.delete(settled));
      return work;
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const target = requestTarget(req.url ?? '/');
    const objectRoute = isObjectPath(target.path);
    let failure: unknown;
    const outcome: ObjectOutcome = {};
    res.on('close', () => {
      // A store failure the object route answered itself still counts as an error of the request.
      const answered = outcome.answered;
      const error = failure ?? answered?.error;
      log?.({
        method,
        path: objectRoute || target.rawQuery === '' ? target.path : `${target.path}?${target.rawQuery}`,
        status: res.statusCode,
        durationMs: performance.now() - started,
        aborted: !res.writableFinished && !answered?.written,
        ...(outcome.sent === undefined ? {} : { bytes: outcome.sent }),
        ...(error === undefined ? {} : { error }),
      });
    });
    try {
      if (target.path === '/health' && (method === 'GET' || method === 'HEAD')) {
        const report = await healthOf(store, index);
        const body = JSON.stringify(report);
        res.writeHead(report.status === 'ok' ? 200 : 503, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'Cache-Control': 'no-store',
        });
        res.end(method === 'HEAD' ? undefined : body);
        return;
      }
      if (objectRoute) {
        await handleObject(context, req, res, target, outcome);
        return;
      }
      sendApiResponse(res, await apiResponse(context, req, target), wire, method === 'HEAD');
    } catch (error) {
      failure = error;
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      // A store or database that does not answer is not the server's fault: 503, and when to try again.
      const down = await unavailablePart(store, index);
      const status = down ? 503 : 500;
      const message = down
        ? `Service unavailable: ${down} Try again shortly.`
        : 'Internal server error; the server log has the details.';
      const headers: Record<string, string> = down
        ? { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }
        : {};
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      if (objectRoute) {
        res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
        res.end(`${message}\n`);
      } else {
        sendApiResponse(res, messageResponse(status, message, headers), wire);
      }
    }
  };

  const serverOptions = {
    highWaterMark: STREAM_BUFFER_BYTES,
    // Large uploads may take longer than Node's default 5-minute request timeout.
    requestTimeout: 0,
    headersTimeout: 60_000,
    keepAliveTimeout: 5_000,
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => void handle(req, res);
  const server: Server = options.tls
    ? createTlsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, listener)
    : createServer(serverOptions, listener);
  // Answer `Expect: 100-continue` from the route, so a refused upload (403, 409, 411) never sends its body.
  server.on('checkContinue', (req, res) => void handle(req, res));
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  try {
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolvePromise();
      });
    });
  } catch (error) {
    await Promise.all([store.close(), index.close()]);
    throw error;
  }
  const address = server.address() as AddressInfo;
  url = `${scheme}://${formatHost(reachableHost(host))}:${address.port}`;
  uploads?.start(options.confirmIntervalMs);

  let closing: Promise<void> | undefined;
  // A lost network: every connection drops, nothing listens for a while, then the same port again.
  faults.interrupt = (forMs) => {
    server.close();
    server.closeAllConnections();
    setTimeout(() => {
      if (!closing) server.listen(address.port, host);
    }, forMs).unref();
  };
  return {
    url,
    port: address.port,
    storeDir: store.location,
    indexLocation: index.location,
    objectCount,
    reindex: () => reindex(store, index),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolvePromise) => {
          if (server.listening) server.close(() => resolvePromise());
          else resolvePromise();
        });
        server.closeAllConnections();
        await closed;
        await Promise.all(pending);
        await uploads?.stop();
        await Promise.all([store.close(), index.close()]);
      })();
      return closing;
    },
  };
}
