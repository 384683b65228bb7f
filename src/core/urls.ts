/** The one check of http(s) addresses, and how object URLs are shown in messages. */

/** Why a value is not an http(s) address. */
export type HttpUrlProblem = 'not a URL' | 'not http(s)';

/**
 * Parses an address (relative to `base` when given) and accepts only http: and https:. Every URL the package
 * requests passes here: the configured service URL and the object URLs the service hands out.
 */
export function parseHttpUrl(value: string, base?: URL): URL | HttpUrlProblem {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return 'not a URL';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : 'not http(s)';
}

/** An object URL as messages show it: the query string of a pre-signed URL is a credential, so it is left out. */
export function displayUrl(url: URL): string {
  return url.search ? `${url.origin}${url.pathname}?…` : url.href;
}
