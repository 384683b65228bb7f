import { FAULTS } from '../core/dispatch-faults.js';
import {
  AbortedError,
  type ErrorCode,
  LocalFileError,
  MissionDataError,
  NetworkError,
  type Peer,
} from '../core/errors.js';
import { CONNECTION_DROP_CODES, errorCode } from '../core/failure-policy.js';
import { hideCredentials, type ProxySettings, type ProxyValue, proxyFor } from '../core/proxy.js';
import { snippet } from '../core/text.js';
import { displayUrl } from '../core/urls.js';

const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const LOCAL_FILE_CODES = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'EMFILE', 'ENFILE', 'EIO']);
/** What a transport failure happened to. */
export interface TransportFailure {
  method: string;
  url: URL;
  error: unknown;
  /** Whose address this is: the service's (from configuration) or the object store's (from the service). */
  peer: Peer;
  signal?: AbortSignal | undefined;
  /** The limits that were in force, for timeout messages. */
  timeoutMs: number;
  /** Whether the answer's head had arrived (its body was being read): a plain-http hint is then beside the point. */
  answered?: boolean | undefined;
  /** The proxies in force: a connection that fails to one is the proxy's failure, not the peer's. */
  proxy?: ProxySettings | undefined;
}

/**
 * Translates a transport failure into the error classes of this package: method, URL and outcome in the
 * message, and what to do about it in the hint.
 */
export function transportError(failure: TransportFailure): Error {
  const { url, error, signal } = failure;
  if (signal?.aborted) return new AbortedError(undefined, { cause: signal.reason });
  if (error instanceof MissionDataError) return error;
  const code = errorCode(error);
  const viaProxy = proxyFor(failure.proxy, url);
  if (viaProxy) {
    const proxied = proxyConnectError(failure, viaProxy, code);
    if (proxied) return proxied;
  }
  const failed = new FailedExchange(failure, code);
  const known = code !== undefined && Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined;
  return known ? known(failed) : failed.otherwise();
}

/** One failed exchange, as its messages speak of it. */
class FailedExchange {
  /** `GET https://…`: the query string of an object URL is a credential, so it is left out. */
  readonly where: string;

  constructor(
    readonly failure: TransportFailure,
    readonly code: string | undefined,
  ) {
    const { method, url, peer } = failure;
    // The service's URLs carry only the caller's filters.
    this.where = `${method} ${peer === 'service' ? url.href : displayUrl(url)}`;
  }

  get url(): URL {
    return this.failure.url;
  }

  get peer(): Peer {
    return this.failure.peer;
  }

  /** The error's own words on one line (OpenSSL's run over several). */
  get detail(): string {
    const { error } = this.failure;
    return snippet(error instanceof Error ? error.message : String(error), 300);
  }

  /** The timeout in force, as the messages write it (`30 s`). */
  get limit(): string {
    return `${Math.round(this.failure.timeoutMs / 100) / 10} s`;
  }

  network(message: string, code: ErrorCode, hint?: string): NetworkError {
    return new NetworkError(message, { code, cause: this.failure.error, peer: this.peer, hint });
  }

  /** What to try when the peer cannot be reached: the service's address is configured, the store's is not. */
  unreachable(question: string): string {
    return this.peer === 'service'
      ? `${question} ${this.url.origin} is the service URL in use.`
      : // The service handed out this address: changing the configured URL cannot fix it.
        `The service sent this address of its object store (${this.url.origin}), which cannot be reached; the store may be down or the service misconfigured. Try again later.`;
  }

  /** A failure no code of `BY_CODE` names: a certificate, a local file, a dropped connection, or its own words. */
  otherwise(): Error {
    const { code, where, detail, url } = this;
    if (code && CERTIFICATE_CODES.has(code)) {
      return this.network(
        `${where}: the server's certificate could not be verified (${code}: ${detail}).`,
        'E_CERTIFICATE',
        "The local system's root certificates were not found, or do not include this server's issuer. If your site uses its own certificate authority, set NODE_EXTRA_CA_CERTS to the path of its PEM bundle and run again.",
      );
    }
    if (code && LOCAL_FILE_CODES.has(code)) {
      return new LocalFileError(`${where}: cannot read the local file: ${detail}`, {
        cause: this.failure.error,
      });
    }
    // A TLS server that is sent plain http resets the connection or answers with bytes that are no HTTP, before
    // any answer: a connection that breaks once an answer came is no sign of it.
    const maybeTls =
      this.peer === 'service' && url.protocol === 'http:' && !this.failure.answered
        ? `If the server at ${url.host} speaks https, use an https:// URL.`
        : undefined;
    if (code && CONNECTION_DROP_CODES.has(code)) {
      return this.network(`${where}: the connection was closed or reset (${code}).`, 'E_NETWORK', maybeTls);
    }
    return this.network(`${where}: ${detail}${code ? ` (${code})` : ''}`, 'E_NETWORK', maybeTls);
  }
}

const connectTimeout = (f: FailedExchange) =>
  f.network(
    `${f.where}: could not connect to ${f.url.host} within ${f.limit}.`,
    'E_TIMEOUT',
    'Check the network connection, a VPN or proxy, and the service URL.',
  );

const notHttps = (f: FailedExchange) =>
  f.network(
    `${f.where}: the TLS handshake with ${f.url.host} failed (${f.code}).`,
    'E_TLS',
    f.peer === 'service'
      ? `The server at ${f.url.origin} does not seem to speak https; if it is a plain http server, use an http:// URL.`
      : undefined,
  );

/** The failures a code alone tells, each with its message and what to do about it. */
const BY_CODE: Readonly<Record<string, (failed: FailedExchange) => Error>> = {
  ECONNREFUSED: (f) =>
    f.network(
      `${f.where}: connection refused (nothing is listening at ${f.url.host}).`,
      'E_CONNECTION_REFUSED',
      f.unreachable('Is the service running?'),
    ),
  ENOTFOUND: (f) =>
    f.network(
      `${f.where}: the host ${f.url.hostname} was not found.`,
      'E_HOST_NOT_FOUND',
      f.unreachable('Check the host name, and the network (DNS, a VPN).'),
    ),
  [FAULTS.connectTimeout]: connectTimeout,
  ETIMEDOUT: connectTimeout,
  [FAULTS.answerTimeout]: (f) =>
    f.network(
      `${f.where}: no answer from the ${f.peer} within ${f.limit}.`,
      'E_TIMEOUT',
      `The ${f.peer} may be overloaded; try again later.`,
    ),
  [FAULTS.bodyTimeout]: (f) =>
    f.network(
      `${f.where}: the ${f.peer}'s answer stalled (no data for ${f.limit}).`,
      'E_TIMEOUT',
      'The bytes received so far are kept; run the command again to resume.',
    ),
  [FAULTS.sizeChanged]: (f) =>
    new LocalFileError(`${f.where}: the file's size changed while it was being sent.`, {
      cause: f.failure.error,
    }),
  ERR_SSL_WRONG_VERSION_NUMBER: notHttps,
  ERR_SSL_PACKET_LENGTH_TOO_LONG: notHttps,
  ERR_SSL_HTTP_REQUEST: notHttps,
};

/** Codes of a connection that could not be made at all: through a proxy, it is the proxy's connection. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  FAULTS.connectTimeout,
]);

/**
 * The error of a connection to the proxy that failed (the proxy is down, or its host unknown), naming the proxy
 * and the variable that set it: undefined when the failure is not about connecting to the proxy.
 */
function proxyConnectError(
  { method, url, error, peer, timeoutMs }: TransportFailure,
  setting: ProxyValue,
  code: string | undefined,
): NetworkError | undefined {
  if (!code || !CONNECT_CODES.has(code)) return undefined;
  const proxyUrl = new URL(setting.value);
  // The error names the address it tried (errno errors do): when that is not the proxy's, it is not about it.
  const failed = error as { hostname?: unknown; port?: unknown };
  const proxyPort = Number(proxyUrl.port) || (proxyUrl.protocol === 'https:' ? 443 : 80);
  if (typeof failed.port === 'number' && failed.port !== proxyPort) return undefined;
  if (typeof failed.hostname === 'string' && failed.hostname !== proxyUrl.hostname) return undefined;
  const where = `${method} ${peer === 'service' ? url.href : displayUrl(url)}`;
  const shown = hideCredentials(setting.value).replace(/\/$/, '');
  const named = `the proxy ${shown} (set by ${setting.variable})`;
  const question =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? `Check the proxy address in ${setting.variable}.`
      : `Is the proxy at ${proxyUrl.host} running?`;
  const hint =
    `${question} ${setting.variable} sends ${url.protocol}// requests through it; ` +
    `unset ${setting.variable} to connect directly, or add ${url.hostname} to NO_PROXY.`;
  const network = (message: string, networkCode: ErrorCode) =>
    new NetworkError(message, { code: networkCode, cause: error, peer, hint, proxy: shown });
  if (code === 'ECONNREFUSED') {
    return network(
      `${where}: connection refused by ${named}: nothing is listening at ${proxyUrl.host}.`,
      'E_CONNECTION_REFUSED',
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return network(`${where}: the host of ${named} was not found.`, 'E_HOST_NOT_FOUND');
  }
  if (code === FAULTS.connectTimeout) {
    const seconds = Math.round(timeoutMs / 100) / 10;
    return network(`${where}: could not connect to ${named} within ${seconds} s.`, 'E_TIMEOUT');
  }
  return network(`${where}: ${named} cannot be reached (${code}).`, 'E_NETWORK');
}
