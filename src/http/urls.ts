/** The one check of http(s) addresses, and how request paths and object URLs are written and shown. */
import { ValidationError } from '../errors.js';
import { unsafePathReason } from '../path-safety.js';

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

/** Encodes a storage path for a request path; unsafe paths are refused before anything is sent. */
export function encodePath(path: string, what: string): string {
  const reason = unsafePathReason(path);
  if (reason) throw new ValidationError([`Invalid ${what} ${JSON.stringify(path)}: ${reason}.`]);
  return path.split('/').map(encodeURIComponent).join('/');
}
