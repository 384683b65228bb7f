/**
 * The connections of a server and the answers under way on each, so that a drain closes only the connections
 * with nothing left to send. Node's own `closeIdleConnections()` takes a connection for idle as soon as its
 * response has called `end()`, while the last bytes may still wait in the socket's write buffer for a slow
 * reader: destroying it then cut the download short of its Content-Length.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The open connections of one server, each with the number of its answers not yet closed. */
export class Connections {
  readonly #open = new Map<Socket, number>();

  /** Follows the connections of `server` (after the TLS handshake for HTTPS) and the answers on them. */
  constructor(server: Server, tls: boolean) {
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      this.#open.set(socket, 0);
      socket.once('close', () => this.#open.delete(socket));
    });
    const answering = (req: IncomingMessage, res: ServerResponse) => this.#answering(req.socket, req, res);
    server.on('request', answering);
    server.on('checkContinue', answering);
  }

  /** Connections open now. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Counts an answer on its connection until its response closes, after `finish`, which Node emits once the last
   * write has left the socket's buffer for the system's (or when the connection ends first), and until the
   * request's body has all arrived: a client still sending a body it was answered for (a 503 of the drain, a
   * refusal) would meet a reset instead of reading the answer, which Node's own count of idle connections avoids
   * too.
   */
  #answering(socket: Socket, req: IncomingMessage, res: ServerResponse): void {
    const under = this.#open.get(socket);
    if (under === undefined) return;
    this.#open.set(socket, under + 1);
    const answered = new Promise<void>((done) => res.once('close', () => done()));
    const received = new Promise<void>((done) => {
      if (req.readableEnded || req.destroyed) done();
      req.once('end', () => done()).once('close', () => done());
    });
    void Promise.all([answered, received]).then(() => {
      const left = this.#open.get(socket);
      if (left !== undefined) this.#open.set(socket, left - 1);
    });
  }

  /** Destroys the connections with no answer under way and nothing in their write buffer. */
  closeIdle(): void {
    for (const [socket, under] of this.#open) {
      if (under === 0 && socket.writableLength === 0) socket.destroy();
    }
  }
}
