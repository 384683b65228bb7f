/** `mission-data serve`: runs the embedded reference server until Ctrl-C or SIGTERM. */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, isIP } from 'node:net';
import { resolve } from 'node:path';
import { ExitCode, ListenError, UsageError } from '../../core/errors.js';
import {
  type Dialect,
  isBucketStore,
  isStoreEmpty,
  type ReindexReport,
  type RequestLogEntry,
  type ServerEvent,
  startReferenceServer,
  type WireMode,
  writeDemoArchive,
} from '../../server/index.js';
import type { CommandIO } from '../io.js';

/** Options of `serve`, as its declaration (`../declarations/serve.ts`) gives them. */
export interface ServeCommandOptions {
  port: number;
  host: string;
  /** A folder, or `s3://BUCKET[/PREFIX]`. */
  store: string;
  /** The endpoint of an S3-compatible store (`--s3-endpoint`, or AWS_ENDPOINT_URL_S3). */
  s3Endpoint?: string | undefined;
  /** AWS_ENDPOINT_URL, used when no S3-specific endpoint is given. */
  awsEndpoint?: string | undefined;
  /** The bucket's region (AWS_REGION); us-east-1 when not given. */
  s3Region?: string | undefined;
  /** `postgres://…` (`--index`, or MISSION_DATA_INDEX_URL); the in-memory index when not given. */
  index?: string | undefined;
  /** Add records for objects in the store that have none, once serving. */
  reindex?: boolean | undefined;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  apiKey?: string[] | undefined;
  /** Bearer tokens for `/authorized/` routes. */
  token?: string[] | undefined;
  wire: WireMode;
  /** Which service to play; `both` when not given. */
  dialect?: Dialect | undefined;
  demo?: boolean | undefined;
  /** Seconds the pre-signed URLs handed out stay valid (short-lived URLs, for trying expiry). */
  urlLife?: number | undefined;
  /** How many `/upload` requests are worked on at once (`--upload-concurrency`). */
  uploadConcurrency?: number | undefined;
  /** False with `--no-metrics`. */
  metrics?: boolean | undefined;
  /** `/metrics` on a port of its own (`--metrics-port`, or MISSION_DATA_METRICS_PORT). */
  metricsPort?: number | undefined;
  /** The bearer token `/metrics` needs (`--metrics-token`, or MISSION_DATA_METRICS_TOKEN). */
  metricsToken?: string | undefined;
  /** `human` (the default) or `json` (`--log-format`, or MISSION_DATA_LOG_FORMAT). */
  logFormat?: 'human' | 'json' | undefined;
  /** Seconds a drain on SIGTERM lets the requests under way finish (`--drain-timeout`). */
  drainTimeout?: number | undefined;
  quiet?: boolean | undefined;
  debug?: boolean | undefined;
}

/**
 * One JSON object per request, for a log shipper: time, id, method, route template, path (never credentials),
 * status, duration, bytes, peer, and the error's label when there was one.
 */
export function jsonRequestLog(entry: RequestLogEntry, now = new Date()): string {
  return JSON.stringify({
    time: now.toISOString(),
    level: entry.error !== undefined || entry.status >= 500 ? 'error' : 'info',
    event: 'request',
    id: entry.id,
    method: entry.method,
    route: entry.route,
    path: entry.path,
    status: entry.status,
    durationMs: Math.round(entry.durationMs * 10) / 10,
    bytes: entry.bytes ?? 0,
    peer: entry.peer ?? null,
    ...(entry.aborted ? { aborted: true } : {}),
    ...(entry.error === undefined
      ? {}
      : { error: errorLabel(entry.error).replace(/^ \(error (.*)\)$/, '$1') }),
  });
}

/** One JSON object per event (start, a backend down or back, a drain, the stop). */
export function jsonEventLog(
  event: string,
  fields: Record<string, unknown>,
  level: 'info' | 'warn' | 'error' = 'info',
  now = new Date(),
): string {
  return JSON.stringify({ time: now.toISOString(), level, event, ...fields });
}

/** A server event as the human log says it. */
function eventLine(event: ServerEvent): string {
  switch (event.event) {
    case 'backend-down':
      return `Backend failing: ${event.problem}`;
    case 'backend-up':
      return `Backends answer again (after ${Math.round(event.downForMs / 1000)} s).`;
    case 'draining':
      return `Draining: ${event.running} request${event.running === 1 ? '' : 's'} under way, up to ${event.boundMs / 1000} s.`;
  }
}

/** One stderr line per request: method, path (never credentials), status, the error behind it, time and id. */
export function formatRequestLog(entry: RequestLogEntry): string {
  const outcome = entry.aborted ? `${entry.status} (connection closed early)` : String(entry.status);
  return `${entry.method} ${entry.path} ${outcome}${errorLabel(entry.error)} ${entry.durationMs.toFixed(1)}ms id=${entry.id}`;
}

/**
 * An error of a request or of background work, for the log: an S3 or database error by its name and status
 * only, since their messages may quote an access key or a signature.
 */
function describeError(error: unknown, debug: boolean | undefined): string {
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  if (status !== undefined) return `${(error as Error).name} (HTTP ${status} from the object store)`;
  return debug && error instanceof Error && error.stack ? error.stack : String(error);
}

/** `1 record`, `2 records`. */
function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The report of `--reindex`: counts, and each key left out with the rule it breaks (the first 20). */
function reindexLines(report: ReindexReport): string {
  const shown = report.skipped.slice(0, 20).map(({ key, problem }) => `  not indexed: ${key}: ${problem}\n`);
  const more = report.skipped.length - shown.length;
  return (
    `Reindexed: ${counted(report.listed, 'object passes', 'objects pass')} the naming rules, ` +
    `${counted(report.added, 'record', 'records')} added, ${counted(report.skipped.length, 'object', 'objects')} left out.\n${shown.join('')}${more > 0 ? `  … and ${more} more\n` : ''}`
  );
}

async function readTls(options: ServeCommandOptions): Promise<{ cert: Buffer; key: Buffer } | undefined> {
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

/** The errno of a failed request (`ENOSPC`, `EROFS`), or its error's name, so the log line says what failed. */
function errorLabel(error: unknown): string {
  if (error === undefined) return '';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return ` (error ${code})`;
  return ` (error ${error instanceof Error ? error.name : typeof error})`;
}

/** What each dialect serves, for the start-up lines (each within 80 columns). */
const DIALECT_LINES: Record<Dialect, string> = {
  both: "Dialect both: the spec's routes, and today's /api-key/ and /authorized/ ones.",
  spec: "Dialect spec: the spec's routes only.",
  today: 'Dialect today: uploads at /api-key/upload only, latest=true, paging.',
};

/** True for a host that binds every interface of the machine, which no client can use as an address. */
function isWildcardHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::' || bare === '0:0:0:0:0:0:0:0';
}

/** Who may upload and which routes take tokens, in one line. */
function accessLine(options: ServeCommandOptions): string {
  const tokens = options.token?.length ?? 0;
  const uploads = options.apiKey?.length ? 'uploads need an API key' : 'uploads need no API key';
  const authorized =
    tokens === 0
      ? '/authorized/ routes refuse every request'
      : `/authorized/ routes take ${tokens} bearer token${tokens === 1 ? '' : 's'}`;
  return `Access: ${uploads}; ${authorized}.`;
}

/**
 * What `serve` runs on, one fact a line (each within 80 columns, but for a long store path): the store and
 * its count of files, the index (`memory`, or the database URL with its password masked), the wire, the
 * dialect and who may do what.
 */
export function startLines(
  options: ServeCommandOptions,
  server: { store: string; indexLocation: string; objectCount: number },
): string {
  const files = `${server.objectCount} file${server.objectCount === 1 ? '' : 's'}`;
  const lines = [
    `Store: ${server.store} (${files})`,
    `Index: ${server.indexLocation}`,
    `Wire: ${options.wire}`,
    DIALECT_LINES[options.dialect ?? 'both'],
    accessLine(options),
  ];
  if (isWildcardHost(options.host)) {
    lines.push(`Bound to ${options.host} (all interfaces): use this machine's name or address.`);
  }
  lines.push('Stop with Ctrl-C.');
  return `${lines.join('\n')}\n`;
}

function listenError(error: unknown, options: ServeCommandOptions): ListenError | unknown {
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
async function checkPortFree(options: ServeCommandOptions): Promise<void> {
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

/** Starts the server, prints `Listening on <url>`, logs requests, and stops when `io.signal` aborts. */
export async function serve(options: ServeCommandOptions, io: CommandIO): Promise<number> {
  const bucket = isBucketStore(options.store);
  const location = bucket ? options.store : resolve(options.store);
  if (options.demo && bucket)
    throw new UsageError('--demo fills a store folder; give --store a folder to use it.');
  const tls = await readTls(options);
  await checkPortFree(options);
  if (!isLoopbackHost(options.host) && !options.apiKey?.length) {
    // Shown even with --quiet: an open store on the network is not noise.
    io.stderr.write(
      `Warning: on ${options.host} without --api-key, anyone who reaches this machine can upload.\n` +
        'Give --api-key KEY to guard uploads.\n',
    );
  }
  if (options.demo) {
    if (await isStoreEmpty(location)) {
      const count = await writeDemoArchive(location);
      io.stderr.write(`Filled ${location} with a demo archive of ${count} files.\n`);
    } else {
      io.stderr.write(`Store ${location} is not empty: keeping its files and adding no demo archive.\n`);
    }
  }
  // The AWS SDK warns at every start, in seven lines, that a later release needs a newer Node: nothing for the
  // operator of this server to act on. It reads the setting when the S3 client is made; one given is kept.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const json = options.logFormat === 'json';
  const event = (name: string, fields: Record<string, unknown>, level: 'info' | 'warn' | 'error' = 'info') =>
    io.stderr.write(`${jsonEventLog(name, fields, level)}\n`);
  let server: Awaited<ReturnType<typeof startReferenceServer>>;
  try {
    server = await startReferenceServer({
      store: location,
      port: options.port,
      host: options.host,
      apiKeys: options.apiKey,
      tokens: options.token,
      wire: options.wire,
      dialect: options.dialect ?? 'both',
      ...(options.urlLife === undefined ? {} : { faults: { urlLifeSeconds: options.urlLife } }),
      uploadConcurrency: options.uploadConcurrency,
      s3Endpoint: options.s3Endpoint ?? options.awsEndpoint,
      s3Region: options.s3Region,
      indexUrl: options.index,
      tls,
      metrics: options.metrics ?? true,
      metricsPort: options.metricsPort,
      metricsToken: options.metricsToken,
      ...(options.drainTimeout === undefined ? {} : { drainTimeoutMs: options.drainTimeout * 1000 }),
      onEvent: (happened) => {
        if (json) {
          const { event: name, ...fields } = happened;
          event(name, fields, name === 'backend-down' ? 'error' : 'info');
        } else if (!options.quiet && (happened.event !== 'draining' || happened.running > 0)) {
          io.stderr.write(`${eventLine(happened)}\n`);
        }
      },
      onBackgroundError: (error) => {
        const detail = describeError(error, options.debug);
        if (json) event('background-error', { error: detail }, 'error');
        else io.stderr.write(`Error while confirming uploads: ${detail}\n`);
      },
      log: (entry) => {
        if (json) {
          if (!options.quiet || entry.error !== undefined) io.stderr.write(`${jsonRequestLog(entry)}\n`);
          return;
        }
        if (!options.quiet) io.stderr.write(`${formatRequestLog(entry)}\n`);
        if (entry.error !== undefined) {
          const detail = describeError(entry.error, options.debug);
          io.stderr.write(`Error while answering ${entry.method} ${entry.path} [${entry.id}]: ${detail}\n`);
        }
      },
    });
  } catch (error) {
    throw listenError(error, options);
  }
  io.stdout.write(`Listening on ${server.url}\n`);
  if (json) {
    event('start', {
      url: server.url,
      store: server.store,
      index: server.indexLocation,
      files: server.objectCount,
      wire: options.wire,
      dialect: options.dialect ?? 'both',
      metrics: server.metricsUrl ?? null,
    });
  } else if (!options.quiet) io.stderr.write(startLines(options, server));
  if (options.reindex) {
    // The service answers meanwhile; records appear as the batches are added.
    server.reindex().then(
      (report) => io.stderr.write(reindexLines(report)),
      (error: unknown) => io.stderr.write(`Reindex failed: ${describeError(error, options.debug)}\n`),
    );
  }
  await new Promise<void>((resolvePromise) => {
    if (io.signal.aborted) resolvePromise();
    else io.signal.addEventListener('abort', () => resolvePromise(), { once: true });
  });
  // A drain: the requests under way finish (within --drain-timeout) while new ones are sent elsewhere; a second
  // signal ends the process at once (main.ts).
  const report = await server.drain();
  if (json) event('stop', { drainMs: report.durationMs, cut: report.cut });
  else if (report.cut > 0 && !options.quiet) {
    io.stderr.write(
      `Stopped: ${report.cut} request${report.cut === 1 ? '' : 's'} cut off by the drain bound.\n`,
    );
  }
  return ExitCode.Success;
}
