/** The embedded reference server: the whole service (pre-signing, object store, downloads, query) in-process. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  type CredentialCheck,
  DIALECTS,
  type Dialect,
  requestTarget,
  type ServerContext,
} from './context.js';
import { type FaultOptions, Faults } from './faults.js';
import { MemoryIndex } from './metadata/memory-index.js';
import { FolderStore } from './objects/folder-store.js';
import { STREAM_BUFFER_BYTES } from './objects/folder-write.js';
import { apiResponse } from './routes/api-routes.js';
import type { ObjectOutcome } from './routes/object-put-route.js';
import { handleObject, isObjectPath } from './routes/object-routes.js';
import { messageResponse, sendApiResponse, WIRE_MODES, type WireMode } from './wire.js';

export type { Dialect } from './context.js';
export { DIALECTS } from './context.js';
export { demoFileNames, isStoreEmpty, writeDemoArchive } from './demo-archive.js';
export type { AmzChecksum, FaultOptions } from './faults.js';
export type { IndexQuery, MetadataIndex, MetadataRecord } from './metadata/metadata-index.js';
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
export interface ReferenceServerOptions {
  /** The store folder (created when missing); objects are files at their storage key below it. */
  storeDir: string;
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
  /** Where it listens, e.g. `http://127.0.0.1:8080` (no trailing slash). */
  url: string;
  /** The port it listens on. */
  port: number;
  /** The store folder, symlinks resolved. */
  storeDir: string;
  /** Number of objects in the metadata index when the server started. */
  readonly objectCount: number;
  /** Stops listening, ends every connection and waits for interrupted uploads to be cleaned up. */
  close(): Promise<void>;
}

const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
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
  const store = await FolderStore.open(storeDir, {
    uploadIdleTimeoutMs: options.uploadIdleTimeoutMs,
    secret: options.secret,
  });
  const index = new MemoryIndex(await store.list());
  const objectCount = await index.count();
  const pending = new Set<Promise<unknown>>();
  let url = '';
  const faults = new Faults(options.faults);

  const context: ServerContext = {
    store,
    index,
    signer: store.signer,
    wire,
    dialect,
    faults,
    checkApiKey: options.apiKeys && options.apiKeys.length > 0 ? secretChecker(options.apiKeys) : undefined,
    checkToken: options.tokens && options.tokens.length > 0 ? secretChecker(options.tokens) : undefined,
    baseUrl: (req) => {
      const hostHeader = req.headers.host;
      return hostHeader && HOST_HEADER.test(hostHeader) ? `http://${hostHeader}` : url;
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
      const message = 'Internal server error; the server log has the details.';
      if (objectRoute) {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`${message}\n`);
      } else {
        sendApiResponse(res, messageResponse(500, message), wire);
      }
    }
  };

  const server: Server = createServer(
    {
      highWaterMark: STREAM_BUFFER_BYTES,
      // Large uploads may take longer than Node's default 5-minute request timeout.
      requestTimeout: 0,
      headersTimeout: 60_000,
      keepAliveTimeout: 5_000,
    },
    (req, res) => void handle(req, res),
  );
  // Answer `Expect: 100-continue` from the route, so a refused upload (403, 409, 411) never sends its body.
  server.on('checkContinue', (req, res) => void handle(req, res));
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolvePromise();
    });
  });
  const address = server.address() as AddressInfo;
  url = `http://${formatHost(host)}:${address.port}`;

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
    storeDir: store.root,
    objectCount,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolvePromise) => {
          if (server.listening) server.close(() => resolvePromise());
          else resolvePromise();
        });
        server.closeAllConnections();
        await closed;
        await Promise.all(pending);
      })();
      return closing;
    },
  };
}
