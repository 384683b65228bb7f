/**
 * `mission-data serve`: runs the embedded reference server until a closing signal (Ctrl-C, SIGTERM, a closed
 * terminal or console window, Ctrl-Break), then drains.
 */
import { ExitCode, UsageError } from '../../core/errors.js';
import { settingsFromFlags, storeBackendFor } from '../../server/backend-registry.js';
import {
  isStoreEmpty,
  type ReferenceServer,
  startReferenceServer,
  writeDemoArchive,
} from '../../server/index.js';
import type { CommandIO } from '../io.js';
import { checkListenable, checkMetricsPort, isLoopbackHost, listenError, readTls } from './serve-checks.js';
import { describeError, reindexLines, ServeLog } from './serve-log.js';
import type { BackendFlagValues, ServeCommandOptions } from './serve-options.js';

export type { ServeCommandOptions } from './serve-options.js';

/** Fills an empty store folder with the demo archive, or says why it keeps the files it has. */
async function fillDemo(folder: string, io: CommandIO): Promise<void> {
  if (await isStoreEmpty(folder)) {
    const count = await writeDemoArchive(folder);
    io.stderr.write(`Filled ${folder} with a demo archive of ${count} files.\n`);
  } else {
    io.stderr.write(`Store ${folder} is not empty: keeping its files and adding no demo archive.\n`);
  }
}

/** Starts the server on the store and backends as given, logging to `log`. */
async function startServer(
  options: ServeCommandOptions & BackendFlagValues,
  tls: { cert: Buffer; key: Buffer } | undefined,
  log: ServeLog,
): Promise<ReferenceServer> {
  try {
    return await startReferenceServer({
      ...settingsFromFlags(options),
      store: options.store,
      port: options.port,
      host: options.host,
      apiKeys: options.apiKey,
      tokens: options.token,
      wire: options.wire,
      dialect: options.dialect ?? 'both',
      ...(options.urlLife === undefined ? {} : { faults: { urlLifeSeconds: options.urlLife } }),
      uploadConcurrency: options.uploadConcurrency,
      tls,
      metrics: options.metrics ?? true,
      metricsPort: options.metricsPort,
      metricsToken: options.metricsToken,
      ...(options.drainTimeout === undefined ? {} : { drainTimeoutMs: options.drainTimeout * 1000 }),
      onEvent: log.onEvent,
      onBackgroundError: log.onBackgroundError,
      log: log.request,
    });
  } catch (error) {
    throw listenError(error, options);
  }
}

/** Resolves once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolvePromise) => {
    if (signal.aborted) resolvePromise();
    else signal.addEventListener('abort', () => resolvePromise(), { once: true });
  });
}

/** Starts the server, prints `Listening on <url>`, logs requests, and stops when `io.signal` aborts. */
export async function serve(
  options: ServeCommandOptions & BackendFlagValues,
  io: CommandIO,
): Promise<number> {
  checkMetricsPort(options);
  const folder = storeBackendFor(options.store).localFolder?.(options.store);
  if (options.demo && folder === undefined)
    throw new UsageError('--demo fills a store folder; give --store a folder to use it.');
  const tls = await readTls(options);
  await checkListenable(options);
  if (options.demo && folder !== undefined) await fillDemo(folder, io);
  // The AWS SDK warns at every start, in seven lines, that a later release needs a newer Node: nothing for the
  // operator of this server to act on. It reads the setting when the S3 client is made; one given is kept.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const log = new ServeLog(options, io);
  const server = await startServer(options, tls, log);
  // Once listening, so that it never comes before a failure to start.
  if (!isLoopbackHost(options.host) && !options.apiKey?.length) {
    // Shown even with --quiet: an open store on the network is not noise.
    io.stderr.write(
      `Warning: on ${options.host} without --api-key, anyone who reaches this machine can upload.\n` +
        'Give --api-key KEY to guard uploads.\n',
    );
  }
  log.started(server);
  if (options.reindex) {
    // The service answers meanwhile; records appear as the batches are added.
    server.reindex().then(
      (report) => io.stderr.write(reindexLines(report)),
      (error: unknown) => io.stderr.write(`Reindex failed: ${describeError(error, options.debug)}\n`),
    );
  }
  await aborted(io.signal);
  // A drain: the requests under way finish (within --drain-timeout) while new ones are sent elsewhere; a second
  // signal ends the process at once (main.ts).
  log.stopped(await server.drain());
  return ExitCode.Success;
}
