/** Proxy settings: which proxy the environment names for each kind of address, checked once. */
import { ConfigError } from './errors.js';

/** One proxy-related environment value and the variable it came from. */
export interface ProxyValue {
  value: string;
  variable: string;
}

/**
 * Which proxy each kind of address goes through, as the environment says. Both the service and the
 * object store are reached through them; `NO_PROXY` lists hosts reached directly.
 */
export interface ProxySettings {
  /** Proxy URL for http:// addresses. */
  http: ProxyValue | undefined;
  /** Proxy URL for https:// addresses; the http proxy when only that is set, as undici and curl do. */
  https: ProxyValue | undefined;
  /** Comma- or space-separated hosts (`host`, `.domain`, `host:port`, or `*`) reached without a proxy. */
  noProxy: ProxyValue | undefined;
}

/** Proxy variables, first found wins: the lower-case form first, as undici and curl read them. */
export const PROXY_VARIABLES = {
  http: ['http_proxy', 'HTTP_PROXY'],
  https: ['https_proxy', 'HTTPS_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const;

function firstSet(
  env: Record<string, string | undefined>,
  variables: readonly string[],
): ProxyValue | undefined {
  for (const variable of variables) {
    const value = env[variable]?.trim();
    if (value) return { value, variable };
  }
  return undefined;
}

/** Reads and checks the proxy variables; a proxy URL that cannot be used is a `ConfigError`. */
export function resolveProxy(env: Record<string, string | undefined>): ProxySettings {
  const http = checkProxy(firstSet(env, PROXY_VARIABLES.http));
  const https = checkProxy(firstSet(env, PROXY_VARIABLES.https)) ?? http;
  return { http, https, noProxy: firstSet(env, PROXY_VARIABLES.noProxy) };
}

function checkProxy(setting: ProxyValue | undefined): ProxyValue | undefined {
  if (!setting) return undefined;
  // `proxy.example:3128` without a scheme means an http proxy, as curl reads it.
  const value = /^[a-z][a-z0-9+.-]*:\/\//i.test(setting.value) ? setting.value : `http://${setting.value}`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:', 'socks:', 'socks5:'].includes(parsed.protocol) || !parsed.hostname) {
    throw new ConfigError(
      `Invalid proxy ${JSON.stringify(hideCredentials(setting.value))}, set by the ${setting.variable} environment variable: ` +
        'it must be an http://, https:// or socks5:// URL.',
      { hint: `Give an address such as http://proxy.example:3128, or unset ${setting.variable}.` },
    );
  }
  return { value, variable: setting.variable };
}

/** A proxy URL with its password hidden, for messages and `--debug`. */
export function hideCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:****@');
}

/** Says which proxy is used for which addresses, for `--debug`. */
export function describeProxy(proxy: ProxySettings): string {
  const { http, https, noProxy } = proxy;
  if (!http && !https) {
    return 'proxy: none (HTTPS_PROXY, HTTP_PROXY and their lower-case forms are unset)';
  }
  const route = (scheme: string, setting: ProxyValue | undefined) =>
    setting
      ? `${scheme} addresses through ${hideCredentials(setting.value)} (${setting.variable})`
      : `${scheme} addresses directly`;
  const except = noProxy ? `; directly to ${noProxy.value} (${noProxy.variable})` : '';
  return `proxy: ${route('https://', https)}, ${route('http://', http)}${except}`;
}

/**
 * The proxy a request to `url` goes through, or undefined when it goes directly: the same choice undici's
 * `EnvHttpProxyAgent` makes (`NO_PROXY` entries match the host, its sub-domains, and the port when they give one).
 */
export function proxyFor(proxy: ProxySettings | undefined, url: URL): ProxyValue | undefined {
  const setting = url.protocol === 'https:' ? proxy?.https : proxy?.http;
  if (!setting) return undefined;
  const noProxy = proxy?.noProxy?.value ?? '';
  if (noProxy === '*') return undefined;
  const hostname = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || (url.protocol === 'https:' ? 443 : 80);
  for (const entry of noProxy.split(/[,\s]/)) {
    if (!entry) continue;
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const host = (parsed?.[1] ?? entry).replace(/^\*?\./, '').toLowerCase();
    if (parsed && Number.parseInt(parsed[2] ?? '', 10) !== port) continue;
    if (hostname === host || hostname.endsWith(`.${host}`)) return undefined;
  }
  return setting;
}
