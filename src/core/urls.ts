/** The one check of http(s) addresses, and how object URLs are shown in messages. */

/** Why a value is not an http(s) address. */
export type HttpUrlProblem = 'not a URL' | 'not http(s)';

/** An address that begins with its own http(s) scheme and authority. */
const ABSOLUTE_HTTP = /^https?:\/\//i;

/**
 * Parses an address (relative to `base` when given) and accepts only http: and https:. Every URL the package
 * requests passes here: the configured service URL and the object URLs the service hands out.
 */
export function parseHttpUrl(value: string, base?: URL): URL | HttpUrlProblem {
  let url: URL;
  try {
    // An absolute address ignores the base, which `URL` would otherwise parse again at every call.
    url = base === undefined || ABSOLUTE_HTTP.test(value) ? new URL(value) : new URL(value, base);
  } catch {
    return 'not a URL';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : 'not http(s)';
}

/** An object URL as messages show it: the query string of a pre-signed URL is a credential, so it is left out. */
export function displayUrl(url: URL): string {
  return url.search ? `${url.origin}${url.pathname}?…` : url.href;
}

/** An address's scheme and authority: all its host depends on. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
/** Hosts by the scheme and authority they were read from: a batch asks for one host thousands of times. */
const HOSTS = new Map<string, string>();
const HOSTS_KEPT = 64;

/** `new URL(href).host`, read once per scheme and authority; throws as `URL` does for what is not a URL. */
export function hostOf(href: string): string {
  const authority = AUTHORITY.exec(href)?.[0];
  if (authority === undefined) return new URL(href).host;
  let host = HOSTS.get(authority);
  if (host === undefined) {
    // The whole address is parsed the first time: a malformed rest is refused as `URL` refuses it.
    host = new URL(href).host;
    if (HOSTS.size >= HOSTS_KEPT) HOSTS.clear();
    HOSTS.set(authority, host);
  }
  return host;
}
