/**
 * Everything this package does around undici, in one place: which of its modules are loaded, when, and with
 * which settings. Each workaround says what it buys; `npm run bench` (startup group) guards them.
 *
 * Two more live outside this file because they act before or outside it: `scripts/bundle.js` gives undici's
 * HTTP/2 client a stand-in for `node:http2` (~15 ms of every command's start-up; HTTP/2 is never enabled here),
 * and `bin/mission-data.js` sets V8's `--liftoff-only` (see the comment there).
 */
import type { Dispatcher } from 'undici';
import type { ProxySettings } from '../core/proxy.js';

/** The two parts of undici the client uses: its connection pool, and `request` (called on any dispatcher). */
export interface Transport {
  Agent: typeof import('undici').Agent;
  request: typeof import('undici/lib/api/api-request.js').default;
}

/** Connection settings of the client's own agent. */
export interface AgentSettings {
  /** Allowed to connect, in ms. */
  timeoutMs: number;
  /** Proxies from the environment (resolved by `config.ts`); none when left out. */
  proxy?: ProxySettings | undefined;
}

/** Larger stream buffers roughly double file throughput over Node's 16/64 KiB defaults (measured with bench/). */
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

/** The client's own keep-alive agent, behind the configured proxy when there is one. */
export async function createAgent(settings: AgentSettings): Promise<Dispatcher> {
  const options = {
    // Only the connection's: the wait for an answer and between bytes is given with each request
    // (`ServiceTransport.send`), which also covers a dispatcher the caller injected.
    connect: { timeout: settings.timeoutMs },
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    // Object GETs are long streams: pipelining would queue one file behind another, so each request gets its
    // own connection, up to the highest --concurrency the command line accepts.
    pipelining: 1,
    connections: 64,
  };
  const proxy = settings.proxy;
  if (proxy?.http || proxy?.https) return createProxyAgent(proxy, options);
  const { Agent } = await loadTransport();
  return new Agent(options);
}

/**
 * undici's own `EnvHttpProxyAgent`, loaded only when a proxy is configured so that start-up stays as fast
 * without one. It is handed every value explicitly: left unset, it would read `process.env` itself, which
 * only `config.ts` may (a library caller's `env` option would be ignored otherwise).
 */
async function createProxyAgent(
  proxy: ProxySettings,
  options: Record<string, unknown> & { connect: { timeout: number } },
): Promise<Dispatcher> {
  const { EnvHttpProxyAgent, Pool } = await Promise.all([
    import('undici/lib/dispatcher/env-http-proxy-agent.js'),
    import('undici/lib/dispatcher/pool.js'),
  ]).then(
    ([agent, pool]) => ({ EnvHttpProxyAgent: agent.default, Pool: pool.default }),
    async () => (await import('undici')).default,
  );
  return new EnvHttpProxyAgent({
    ...options,
    // '' (not undefined) means "none": undefined would make undici fall back to process.env.
    httpProxy: proxy.http?.value ?? '',
    httpsProxy: proxy.https?.value ?? '',
    noProxy: proxy.noProxy?.value ?? '',
    // Plain http:// requests go to the proxy in absolute form, as curl sends them, rather than through a
    // CONNECT tunnel, which many proxies allow only to port 443; https:// is always tunnelled.
    proxyTunnel: false,
    // undici's proxy agent builds the pools to the proxy itself without the timeouts above; this factory
    // gives every pool (to the proxy, through a tunnel, or direct) the same settings as the plain agent.
    factory: (origin: string | URL, poolOptions: object) => new Pool(origin, { ...options, ...poolOptions }),
  });
}
