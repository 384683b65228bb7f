/**
 * Everything this package does around undici, in one place: which of its modules are loaded, when, and with
 * which settings. Each workaround says what it buys; `npm run bench` (startup group) guards them.
 *
 * Two more live outside this file because they act before or outside it: `scripts/bundle.js` gives undici's
 * HTTP/2 client a stand-in for `node:http2` (~15 ms of every command's start-up; HTTP/2 is never enabled here),
 * and `bin/mission-data.js` sets V8's `--liftoff-only` (see the comment there).
 */
import type { Dispatcher } from 'undici';

/** The two parts of undici the client uses: its connection pool, and `request` (called on any dispatcher). */
export interface Transport {
  Agent: typeof import('undici').Agent;
  request: typeof import('undici/lib/api/api-request.js').default;
}

/** Connection settings of the client's own agent. */
export interface AgentSettings {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Larger stream buffers roughly double file throughput over Node's 16/64 KiB defaults (measured, DESIGN.md). */
export const OBJECT_HIGH_WATER_MARK = 1024 * 1024;

let transport: Promise<Transport> | undefined;

/**
 * Loads undici on first use, so that `--help` and every command that sends nothing never pay for it. Only
 * two of its modules: undici's index also loads fetch, WebSocket, caches and mocks, which would double what
 * every command pays for undici at start-up. undici publishes no exports map, so its files are public; should
 * another undici 7 release move them, the whole of undici serves instead.
 */
export function loadTransport(): Promise<Transport> {
  transport ??= Promise.all([
    import('undici/lib/dispatcher/agent.js'),
    import('undici/lib/api/api-request.js'),
  ]).then(
    ([agent, api]) => ({ Agent: agent.default, request: api.default }),
    async () => {
      // `default` is undici's module.exports, as Node and bundlers both present CommonJS.
      const { Agent } = (await import('undici')).default;
      return {
        Agent,
        request(this: Dispatcher, options: Dispatcher.RequestOptions) {
          return this.request(options);
        },
      };
    },
  );
  return transport;
}

/** The client's own keep-alive agent. */
export async function createAgent(settings: AgentSettings): Promise<Dispatcher> {
  const { Agent } = await loadTransport();
  return new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    headersTimeout: settings.idleTimeoutMs,
    bodyTimeout: settings.idleTimeoutMs,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    // Object GETs are long streams: pipelining would queue one file behind another, so each request gets its
    // own connection, up to the highest --concurrency the command line accepts.
    pipelining: 1,
    connections: 64,
  });
}
