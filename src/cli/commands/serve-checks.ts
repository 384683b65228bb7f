/**
 * The checks `serve` makes before it starts: the TLS files given, the ports apart, and the host and ports free to
 * listen on.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, isIP } from 'node:net';
import { ListenError, UsageError } from '../../core/errors.js';
import type { ServeCommandOptions } from './serve-options.js';

/** The TLS certificate and key `--tls-cert` and `--tls-key` name, read and checked; none without them. */
export async function readTls(
  options: ServeCommandOptions,
): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (!options.tlsCert && !options.tlsKey) return undefined;
  if (!options.tlsCert || !options.tlsKey) throw new UsageError('Give both --tls-cert and --tls-key.');
  const read = (path: string, what: string) =>
    readFile(path).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read the TLS ${what} ${path} (${error.code ?? 'error'}).`);
    });
  const tls = { cert: await read(options.tlsCert, 'certificate'), key: await read(options.tlsKey, 'key') };
  checkTls(tls, options.tlsCert, options.tlsKey);
  return tls;
}

/**
 * Checks the TLS files the operator gave before the server starts, so a wrong one is named as that file's
 * problem: not a PEM certificate, not a private key (the two swapped, say), or a key of another certificate.
 */
function checkTls(tls: { cert: Buffer; key: Buffer }, certPath: string, keyPath: string): void {
  const swapped = 'were --tls-cert and --tls-key swapped?';
  const looksLikeKey = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(tls.cert.toString('latin1'));
  const looksLikeCert = /-----BEGIN CERTIFICATE-----/.test(tls.key.toString('latin1'));
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(tls.cert);
  } catch {
    throw new UsageError(
      `The TLS certificate ${certPath} is not a PEM certificate${looksLikeKey ? ` but a private key; ${swapped}` : '.'}`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(tls.key);
  } catch {
    throw new UsageError(
      `The TLS key ${keyPath} is not a PEM private key${looksLikeCert ? ` but a certificate; ${swapped}` : ' (or it has a passphrase).'}`,
    );
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new UsageError(`The TLS key ${keyPath} is not the private key of the certificate ${certPath}.`);
  }
}

/**
 * Refuses `--port` and `--metrics-port` of the same port before anything listens: the second listen would
 * only say that the port is in use, as if another program held it.
 */
export function checkMetricsPort(options: ServeCommandOptions): void {
  const { port, metricsPort } = options;
  if (options.metrics === false || metricsPort === undefined || metricsPort === 0) return;
  if (metricsPort === port) {
    throw new UsageError(
      `--port and --metrics-port are both ${port}: give /metrics a port of its own, or leave out ` +
        "--metrics-port to answer /metrics on the API's port.",
    );
  }
}

/** Errors of a host name that does not resolve (getaddrinfo's, as Node names them). */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);

const HOST_HINT =
  'Give --host an address of this machine: 127.0.0.1 (the default) for this machine only, 0.0.0.0 for every interface.';

/**
 * The ListenError of a listen that failed, naming what is wrong: the port in use (the API's or the metrics'
 * one), a host that is not an address of this machine or does not resolve, a port below 1024 without the
 * privilege; any other error as it is.
 */
export function listenError(error: unknown, options: ServeCommandOptions): ListenError | unknown {
  const { code, port: failedPort } = error as NodeJS.ErrnoException & { port?: number };
  const port = failedPort ?? options.port;
  const metrics = options.metricsPort !== undefined && port === options.metricsPort && port !== options.port;
  const flag = metrics ? '--metrics-port' : '--port';
  const where = `${options.host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new ListenError(`Cannot listen on ${where}: the port is in use.`, {
      hint: `Pick another port with ${flag}, or ${flag} 0 for any free one.`,
      cause: error,
    });
  }
  if (code === 'EADDRNOTAVAIL') {
    return new ListenError(
      `Cannot listen on ${options.host}: it is not an address of this machine (EADDRNOTAVAIL).`,
      { hint: HOST_HINT, cause: error },
    );
  }
  if (code !== undefined && UNRESOLVED.has(code)) {
    return new ListenError(
      `Cannot listen on ${options.host}: it is neither an address nor a host name that resolves (${code}).`,
      { hint: HOST_HINT, cause: error },
    );
  }
  if (code === 'EACCES') {
    const privileged = port > 0 && port < 1024;
    return new ListenError(`Cannot listen on ${where} (EACCES).`, {
      hint: privileged
        ? `Ports below 1024 need privileges: pick a port from 1024 up with ${flag}, or ${flag} 0 for any free one.`
        : `The system does not let this user listen there; pick another port with ${flag}.`,
      cause: error,
    });
  }
  return error;
}

/** Listens on `port` of `host` for a moment, failing as the server's own listen would. */
async function probe(host: string, port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen({ port, host, exclusive: true }, () => done());
    });
  } finally {
    await new Promise<void>((done) => server.close(() => done()));
  }
}

/**
 * Fails as `serve` would on a host it cannot bind (not an address of this machine, or a name that does not
 * resolve) or a port in use (or not ours to take), the API's or the metrics' one, before a warning is printed or
 * the store folder or the demo archive is written: a mistyped host or port must not leave a new folder behind.
 * The server's own listen still reports a port taken in between.
 */
export async function checkListenable(options: ServeCommandOptions): Promise<void> {
  const ports = [options.port];
  if (options.metrics !== false && options.metricsPort) ports.push(options.metricsPort);
  for (const port of ports) {
    try {
      await probe(options.host, port);
    } catch (error) {
      throw listenError(error, options);
    }
  }
}

/** True for a host only this machine reaches: a loopback address or name. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}
