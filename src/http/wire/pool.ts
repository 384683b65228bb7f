/**
 * The wire client: HTTP/1.1 requests over kept-alive connections of its own (`connection.ts`), one pool of idle
 * connections per origin, the most recently used taken first. A request that a kept-alive connection could not
 * carry (the server closed it while it sat idle, before any byte of an answer) is sent once more on a new one,
 * as browsers and curl do.
 */
import { FAULTS } from '../../core/dispatch-faults.js';
import type { Dispatch } from '../dispatch.js';
import { type ConnectionOwner, WireConnection } from './connection.js';
import type { WireAnswer, WireRequest, WireTimeouts } from './types.js';

/** How long an idle connection is kept when the server did not say (Node's own server closes them after 5 s). */
const DEFAULT_KEEP_ALIVE_MS = 4_000;
/** The longest an idle connection is kept, whatever the server says. */
const MAX_KEEP_ALIVE_MS = 60_000;
/** Kept-alive connections are given up this long before the server said it would close them. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

export class WireClient implements ConnectionOwner, Dispatch {
  readonly #idle = new Map<string, WireConnection[]>();
  readonly #open = new Set<WireConnection>();
  readonly #timeouts: WireTimeouts;
  #closed = false;
  /** Connections made, requests sent, and those that went over a connection kept from an earlier one. */
  readonly stats = { connections: 0, requests: 0, reused: 0 };

  constructor(timeouts: WireTimeouts) {
    this.#timeouts = timeouts;
  }

  /** Sends a request; resolves once the answer's head is read. */
  async request(request: WireRequest): Promise<WireAnswer> {
    for (;;) {
      if (this.#closed) throw new Error('This client is closed.');
      const kept = this.#take(request.url.origin);
      const connection =
        kept ?? (await WireConnection.open(request.url, this.#timeouts, this, request.signal));
      this.stats.requests += 1;
      if (!kept) {
        this.stats.connections += 1;
        this.#open.add(connection);
      } else {
        this.stats.reused += 1;
      }
      try {
        return await connection.exchange(request);
      } catch (error) {
        // A kept-alive connection the server closed as the request went out, before any byte of an answer: once
        // more, on a fresh one. Once part of an answer came, the server had the request: it is not sent again.
        if (kept && connection.unanswered() && !request.signal?.aborted && isClosedEarly(error)) continue;
        throw error;
      }
    }
  }

  /** What the connections did, for the request log. */
  summary(): string | undefined {
    const { connections, requests, reused } = this.stats;
    if (requests === 0) return undefined;
    return `connections: ${requests} requests over ${connections} connections (${reused} on a kept-alive one)`;
  }

  /** Closes every connection; requests in progress fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of [...this.#open]) connection.close();
    this.#idle.clear();
  }

  release(connection: WireConnection): void {
    if (this.#closed) {
      connection.close();
      return;
    }
    const list = this.#idle.get(connection.origin);
    if (list) list.push(connection);
    else this.#idle.set(connection.origin, [connection]);
  }

  forget(connection: WireConnection): void {
    this.#open.delete(connection);
    const list = this.#idle.get(connection.origin);
    const at = list?.indexOf(connection) ?? -1;
    if (list && at !== -1) list.splice(at, 1);
  }

  /** The most recently used idle connection to `origin` that the server still keeps, if any. */
  #take(origin: string): WireConnection | undefined {
    const list = this.#idle.get(origin);
    const now = Date.now();
    while (list && list.length > 0) {
      const connection = list.pop() as WireConnection;
      const kept = Math.min(
        MAX_KEEP_ALIVE_MS,
        connection.keepAliveMs === undefined
          ? DEFAULT_KEEP_ALIVE_MS
          : connection.keepAliveMs - KEEP_ALIVE_MARGIN_MS,
      );
      if (connection.idle && now - connection.idleSince < kept) return connection;
      connection.close();
    }
    return undefined;
  }
}

/** Whether `error` is a connection closed or reset under a request (not a timeout, not a refusal). */
function isClosedEarly(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === FAULTS.closed || code === 'ECONNRESET' || code === 'EPIPE';
}
