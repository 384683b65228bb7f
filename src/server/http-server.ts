/**
 * The HTTP(S) server the reference server answers on: made with the handler, listening where asked, reachable
 * at a URL, and dropped off the network for a while when a fault mode asks for it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { STREAM_BUFFER_BYTES } from './objects/folder-write.js';
import type { ReferenceServerOptions } from './options.js';
import type { RequestHandler } from './request-handler.js';

/** An HTTP server (HTTPS with `tls`) handing every request to `handle`; not yet listening. */
export function httpServer(tls: ReferenceServerOptions['tls'], handle: RequestHandler): Server {
  const serverOptions = {
    highWaterMark: STREAM_BUFFER_BYTES,
    // Large uploads may take longer than Node's default 5-minute request timeout.
    requestTimeout: 0,
    headersTimeout: 60_000,
    keepAliveTimeout: 5_000,
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => void handle(req, res);
  const server: Server = tls
    ? createTlsServer({ ...serverOptions, cert: tls.cert, key: tls.key }, listener)
    : createServer(serverOptions, listener);
  // Answer `Expect: 100-continue` from the route, so a refused upload (403, 409, 411) never sends its body.
  server.on('checkContinue', (req, res) => void handle(req, res));
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

/** Listens on `port` (0: a free one) of `host`; resolves with the port it listens on. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolvePromise();
    });
  });
  return (server.address() as AddressInfo).port;
}

/**
 * Where clients reach a server listening on `host` and `port`, e.g. `http://127.0.0.1:8080`; loopback when it
 * binds every interface.
 */
export function serverUrl(scheme: string, host: string, port: number): string {
  return `${scheme}://${formatHost(reachableHost(host))}:${port}`;
}

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

/**
 * A lost network, for the `outage` fault: every connection drops, nothing listens for `forMs`, then the same
 * port again, unless the server is `stopping` by then.
 */
export function networkLoss(
  server: Server,
  port: number,
  host: string,
  stopping: () => boolean,
): (forMs: number) => void {
  return (forMs) => {
    server.close();
    server.closeAllConnections();
    setTimeout(() => {
      if (!stopping()) server.listen(port, host);
    }, forMs).unref();
  };
}
