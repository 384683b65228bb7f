/** The checks `serve` makes before it starts: the TLS files given, and the port free to listen on. */
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

/** The ListenError of a port in use or not ours to take; any other error as it is. */
export function listenError(error: unknown, options: ServeCommandOptions): ListenError | unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${options.host}:${options.port}`;
  if (code === 'EADDRINUSE') {
    return new ListenError(`Cannot listen on ${where}: the port is in use.`, {
      hint: 'Pick another port with --port, or --port 0 for any free one.',
      cause: error,
    });
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ListenError(`Cannot listen on ${where} (${code}).`, {
      hint: 'Ports below 1024 need privileges; --host must be an address of this machine.',
      cause: error,
    });
  }
  return error;
}

/**
 * Fails as `serve` would on a port in use (or not ours to take), before the store folder or the demo archive is
 * written: a mistyped port must not leave a new folder behind. The server's own listen still reports a port
 * taken in between.
 */
export async function checkPortFree(options: ServeCommandOptions): Promise<void> {
  if (options.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((done, fail) => {
      probe.once('error', fail);
      probe.listen({ port: options.port, host: options.host, exclusive: true }, () => done());
    });
  } catch (error) {
    throw listenError(error, options);
  } finally {
    await new Promise<void>((done) => probe.close(() => done()));
  }
}

/** True for a host only this machine reaches: a loopback address or name. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}
