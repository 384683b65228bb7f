/** What `serve` writes to stderr: a line (or a JSON object) per request and event, the start-up lines, reports. */
import type {
  Dialect,
  DrainReport,
  ReferenceServer,
  ReindexReport,
  RequestLogEntry,
  ServerEvent,
} from '../../server/index.js';
import type { CommandIO } from '../io.js';
import type { ServeCommandOptions } from './serve-options.js';

/** The level of a request's log line: an error or a 5xx is an error, a request the stop cut off a warning. */
function requestLevel(entry: RequestLogEntry): 'error' | 'warn' | 'info' {
  if (entry.error !== undefined || entry.status >= 500) return 'error';
  return entry.cut ? 'warn' : 'info';
}

/**
 * One JSON object per request, for a log shipper: time, id, method, route template, path (never credentials),
 * status, duration, body bytes sent, peer, and the error's label when there was one. A request whose connection
 * closed before its answer ended has status 499 (nginx's "client closed request"), `aborted`, the status it had
 * already sent as `sentStatus`, and `cut` when the server's stop cut it off.
 */
export function jsonRequestLog(entry: RequestLogEntry, now = new Date()): string {
  return JSON.stringify({
    time: now.toISOString(),
    level: requestLevel(entry),
    event: 'request',
    id: entry.id,
    method: entry.method,
    route: entry.route,
    path: entry.path,
    status: entry.status,
    ...(entry.sentStatus === undefined ? {} : { sentStatus: entry.sentStatus }),
    durationMs: Math.round(entry.durationMs * 10) / 10,
    bytes: entry.bytes,
    peer: entry.peer ?? null,
    ...(entry.aborted ? { aborted: true } : {}),
    ...(entry.cut ? { cut: true } : {}),
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

/**
 * One stderr line per request: method, path (never credentials), status, the error behind it, time and id; a
 * request whose answer did not end says why, and the status it had already sent
 * (`499 (connection closed early; 200 sent)`).
 */
export function formatRequestLog(entry: RequestLogEntry): string {
  const why = entry.cut ? 'cut off when the server stopped' : 'connection closed early';
  const sent = entry.sentStatus === undefined ? '' : `; ${entry.sentStatus} sent`;
  const outcome = entry.aborted ? `${entry.status} (${why}${sent})` : String(entry.status);
  return `${entry.method} ${entry.path} ${outcome}${errorLabel(entry.error)} ${entry.durationMs.toFixed(1)}ms id=${entry.id}`;
}

/**
 * An error of a request or of background work, for the log: an S3 or database error by its name and status
 * only, since their messages may quote an access key or a signature.
 */
export function describeError(error: unknown, debug: boolean | undefined): string {
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  if (status !== undefined) return `${(error as Error).name} (HTTP ${status} from the object store)`;
  return debug && error instanceof Error && error.stack ? error.stack : String(error);
}

/** `1 record`, `2 records`. */
function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The report of `--reindex`: counts, and each key left out with the rule it breaks (the first 20). */
export function reindexLines(report: ReindexReport): string {
  const shown = report.skipped.slice(0, 20).map(({ key, problem }) => `  not indexed: ${key}: ${problem}\n`);
  const more = report.skipped.length - shown.length;
  return (
    `Reindexed: ${counted(report.listed, 'object passes', 'objects pass')} the naming rules, ` +
    `${counted(report.added, 'record', 'records')} added, ${counted(report.skipped.length, 'object', 'objects')} left out.\n${shown.join('')}${more > 0 ? `  … and ${more} more\n` : ''}`
  );
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

type Level = 'info' | 'warn' | 'error';

/** Where `serve` logs: the server's callbacks, the start and the stop, each as a line of text or a JSON object. */
export class ServeLog {
  readonly #json: boolean;

  constructor(
    private readonly options: ServeCommandOptions,
    private readonly io: CommandIO,
  ) {
    this.#json = options.logFormat === 'json';
  }

  #event(name: string, fields: Record<string, unknown>, level: Level = 'info'): void {
    this.io.stderr.write(`${jsonEventLog(name, fields, level)}\n`);
  }

  /** A server event: a backend down or back, a drain. */
  readonly onEvent = (happened: ServerEvent): void => {
    if (this.#json) {
      const { event: name, ...fields } = happened;
      this.#event(name, fields, name === 'backend-down' ? 'error' : 'info');
    } else if (!this.options.quiet && (happened.event !== 'draining' || happened.running > 0)) {
      this.io.stderr.write(`${eventLine(happened)}\n`);
    }
  };

  /** An error of background work (confirming uploads). */
  readonly onBackgroundError = (error: unknown): void => {
    const detail = describeError(error, this.options.debug);
    if (this.#json) this.#event('background-error', { error: detail }, 'error');
    else this.io.stderr.write(`Error while confirming uploads: ${detail}\n`);
  };

  /** A request answered. */
  readonly request = (entry: RequestLogEntry): void => {
    const { quiet, debug } = this.options;
    if (this.#json) {
      if (!quiet || entry.error !== undefined) this.io.stderr.write(`${jsonRequestLog(entry)}\n`);
      return;
    }
    if (!quiet) this.io.stderr.write(`${formatRequestLog(entry)}\n`);
    if (entry.error !== undefined) {
      const detail = describeError(entry.error, debug);
      this.io.stderr.write(`Error while answering ${entry.method} ${entry.path} [${entry.id}]: ${detail}\n`);
    }
  };

  /** The server listens: its URL on stdout, what it runs on to stderr. */
  started(server: ReferenceServer): void {
    const { options } = this;
    this.io.stdout.write(`Listening on ${server.url}\n`);
    if (this.#json) {
      this.#event('start', {
        url: server.url,
        store: server.store,
        index: server.indexLocation,
        files: server.objectCount,
        wire: options.wire,
        dialect: options.dialect ?? 'both',
        metrics: server.metricsUrl ?? null,
      });
    } else if (!options.quiet) this.io.stderr.write(startLines(options, server));
  }

  /** The server stopped after its drain. */
  stopped(report: DrainReport): void {
    if (this.#json) this.#event('stop', { drainMs: report.durationMs, cut: report.cut });
    else if (report.cut > 0 && !this.options.quiet) {
      this.io.stderr.write(
        `Stopped: ${report.cut} request${report.cut === 1 ? '' : 's'} cut off by the drain bound.\n`,
      );
    }
  }
}
