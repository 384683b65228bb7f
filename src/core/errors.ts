/** Error classes shared by the library and the command line: each has a stable `code` and an exit status. */
import { CLOSING_SIGNALS, type ClosingSignal } from './signals.js';

/** Exit statuses of the command line. */
export const ExitCode = {
  Success: 0,
  Failure: 1,
  Usage: 2,
  /** Another run holds what this one needs (a sync of the same data root and filters): try again later (EX_TEMPFAIL). */
  Busy: 75,
  /** Ctrl-C: 128 + SIGINT, as shells report it. */
  Interrupted: 130,
  /** SIGTERM: 128 + SIGTERM, as shells report it. */
  Terminated: 143,
  /** The terminal or console window closed: 128 + SIGHUP. */
  Hangup: 129,
  /** Ctrl-Break (Windows): 128 + SIGBREAK, whose number is 21 there. */
  Break: 149,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Every `code` an error of this package carries; stable across releases, for scripts and library callers. */
export type ErrorCode =
  | 'E_VALIDATION'
  | 'E_WRONG_FOLDER'
  | 'E_USAGE'
  | 'E_CONFIG'
  | 'E_API'
  | 'E_NOT_FOUND'
  | 'E_ALREADY_EXISTS'
  | 'E_NAME_RESERVED'
  | 'E_NETWORK'
  | 'E_CONNECTION_REFUSED'
  | 'E_HOST_NOT_FOUND'
  | 'E_TIMEOUT'
  | 'E_TLS'
  | 'E_CERTIFICATE'
  | 'E_INCOMPLETE'
  | 'E_NOT_ATTEMPTED'
  | 'E_PROTOCOL'
  | 'E_LOCAL_FILE'
  | 'E_FILE_NOT_FOUND'
  | 'E_FILE_CHANGED'
  | 'E_DATA_ROOT'
  | 'E_UNSAFE_PATH'
  | 'E_CHECKSUM'
  | 'E_UNVERIFIED'
  | 'E_STORE_FULL'
  | 'E_NO_SPACE'
  | 'E_ABORTED'
  | 'E_BUSY'
  | 'E_STORE'
  | 'E_LISTEN';

/** Who is at the other end of a request: the service (its URL is configuration) or the object store (its URLs come from the service). */
export type Peer = 'service' | 'object store';

/**
 * The answer header in which an object store declares the errno of its own disk's failure (`ENOSPC`), so a
 * client decides from it and never from the answer's words.
 */
export const STORE_ERRNO_HEADER = 'x-store-errno';

export interface ErrorOptions {
  hint?: string | undefined;
  cause?: unknown;
}

/** Base class of every error this package throws on purpose. */
export class MissionDataError extends Error {
  /** A stable, machine-readable identifier, e.g. `E_VALIDATION`. */
  readonly code: ErrorCode;
  /** What the user can do about it, printed under the message. */
  readonly hint: string | undefined;
  /** The exit status the command line ends with. */
  readonly exitCode: ExitCodeValue;

  constructor(message: string, code: ErrorCode, exitCode: ExitCodeValue, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.hint = options.hint;
  }
}

/** A name, path or value breaks the naming rules; `problems` lists every broken rule, in order. */
export class ValidationError extends MissionDataError {
  readonly problems: readonly string[];

  constructor(
    problems: readonly string[],
    options: ErrorOptions & { code?: 'E_VALIDATION' | 'E_WRONG_FOLDER' } = {},
  ) {
    super(problems.join('\n'), options.code ?? 'E_VALIDATION', ExitCode.Usage, options);
    this.problems = problems;
  }
}

/** The command line was called wrongly: a missing argument, a bad flag value. */
export class UsageError extends MissionDataError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, 'E_USAGE', ExitCode.Usage, options);
  }
}

/** The configuration file or a configuration value is unusable. */
export class ConfigError extends MissionDataError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, 'E_CONFIG', ExitCode.Usage, options);
  }
}

/** The service answered, but not with success. */
export class ApiError extends MissionDataError {
  /** How long the answer's `Retry-After` asked the client to wait, in ms. */
  readonly retryAfterMs: number | undefined;
  /** The object store's error code from its XML body (`SlowDown`, `AccessDenied`), when it gave one. */
  readonly storeCode: string | undefined;
  readonly status: number;
  readonly method: string;
  readonly url: string;
  /** Who answered: the configured service, or the object store behind a URL the service handed out. */
  readonly peer: Peer;
  /** The id the server gave the request (`X-Request-Id`), which its log line carries. */
  readonly requestId: string | undefined;
  /**
   * The errno of the object store's own disk when it failed a write (`ENOSPC`, `EROFS`), as the store declared
   * it (`X-Store-Errno`); undefined for any other answer.
   */
  readonly storeErrno: string | undefined;
  /** The service route that was asked (`upload`, `download`, `query`), when the caller named it. */
  readonly route: 'upload' | 'download' | 'query' | undefined;
  /** True when the object store said the pre-signed URL has expired. */
  readonly urlExpired: boolean;

  constructor(
    details: { method: string; url: string; status: number; message: string; requestId?: string | undefined },
    options: ErrorOptions & {
      code?: ErrorCode;
      retryAfterMs?: number | undefined;
      storeCode?: string | undefined;
      storeErrno?: string | undefined;
      route?: ApiError['route'];
      urlExpired?: boolean | undefined;
      peer?: Peer | undefined;
      /** What the answer means, said in place of the service's own words (kept in `message` of `details`). */
      meaning?: string | undefined;
    } = {},
  ) {
    const id = details.requestId === undefined ? '' : `request id ${details.requestId}`;
    super(
      options.meaning === undefined
        ? `${details.method} ${details.url}: ${details.status} ${details.message}${id && ` (${id})`}`
        : `${options.meaning} (${details.status} from ${details.method} ${details.url}${id && `, ${id}`})`,
      options.code ?? 'E_API',
      ExitCode.Failure,
      options,
    );
    this.status = details.status;
    this.method = details.method;
    this.url = details.url;
    this.retryAfterMs = options.retryAfterMs;
    this.storeCode = options.storeCode;
    this.peer = options.peer ?? 'service';
    this.requestId = details.requestId;
    this.storeErrno = options.storeErrno;
    this.route = options.route;
    this.urlExpired = options.urlExpired ?? false;
  }
}

/** The service could not be reached, or the connection failed or timed out. */
export class NetworkError extends MissionDataError {
  /** Whose address failed: the configured service, or an object-store address the service handed out. */
  readonly peer: Peer;
  /** The proxy (its URL, credentials hidden) when it is the proxy that could not be reached. */
  readonly proxy: string | undefined;

  constructor(
    message: string,
    options: ErrorOptions & { code?: ErrorCode; peer?: Peer; proxy?: string | undefined } = {},
  ) {
    super(message, options.code ?? 'E_NETWORK', ExitCode.Failure, options);
    this.peer = options.peer ?? 'service';
    this.proxy = options.proxy;
  }
}

/** Code of a file a batch left alone because an earlier one showed the service cannot be reached. */
export const NOT_ATTEMPTED = 'E_NOT_ATTEMPTED' satisfies ErrorCode;

/** The service answered something this client cannot read or must not trust. */
export class ProtocolError extends MissionDataError {
  constructor(message: string, options: ErrorOptions & { code?: ErrorCode } = {}) {
    super(message, options.code ?? 'E_PROTOCOL', ExitCode.Failure, options);
  }
}

/** A local file could not be read or written. */
export class LocalFileError extends MissionDataError {
  /** `usage`: the path given is the mistake (a data root that is a file, or is not there), exit status 2. */
  constructor(message: string, options: ErrorOptions & { code?: ErrorCode; usage?: boolean } = {}) {
    super(
      message,
      options.code ?? 'E_LOCAL_FILE',
      options.usage ? ExitCode.Usage : ExitCode.Failure,
      options,
    );
  }
}

/**
 * Why the command line cancelled its work: a signal it received. As the reason of an abort it makes the
 * `AbortedError` carry that signal's exit status.
 */
export class InterruptedBySignal extends Error {
  constructor(readonly signal: ClosingSignal) {
    super(`Interrupted by ${signal}`);
    this.name = 'InterruptedBySignal';
  }

  /** 128 + the signal's number, as shells report it: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 149 for SIGBREAK. */
  get exitCode(): ExitCodeValue {
    return CLOSING_SIGNALS[this.signal];
  }
}

/**
 * The operation was cancelled by an `AbortSignal` or by Ctrl-C. Its `exitCode` is 130, as a shell reports
 * Ctrl-C; 143 when the abort's reason is an `InterruptedBySignal` of SIGTERM.
 */
export class AbortedError extends MissionDataError {
  /**
   * From a batch call (`download`, `upload`) cut short: one result per file, as far as the batch got (files cut
   * short `failed` with the bytes kept for a resume, files never begun `failed` with code `E_NOT_ATTEMPTED`).
   */
  readonly results: readonly object[] | undefined;

  /** Without a message: `Cancelled.`, or `Cancelled: <why>.` when the cause says why (a signal, a reason). */
  constructor(message?: string, options: ErrorOptions & { results?: readonly object[] } = {}) {
    const cause = options.cause;
    const exitCode =
      cause instanceof InterruptedBySignal
        ? cause.exitCode
        : cause instanceof AbortedError
          ? cause.exitCode
          : ExitCode.Interrupted;
    const why = cause instanceof Error && cause.name !== 'AbortError' ? cause.message : undefined;
    super(
      message ?? (why ? `Cancelled: ${why.replace(/\.$/, '')}.` : 'Cancelled.'),
      'E_ABORTED',
      exitCode,
      options,
    );
    this.results = options.results;
  }
}

/** Another process holds the lock this run needs (a sync of the same data root and filter set): exit 75. */
export class BusyError extends MissionDataError {
  /** The process that holds the lock, when known. */
  readonly pid: number | undefined;

  constructor(message: string, options: ErrorOptions & { pid?: number | undefined } = {}) {
    super(message, 'E_BUSY', ExitCode.Busy, options);
    this.pid = options.pid;
  }
}

/** The reference server's store folder cannot be used: a setup problem, not a bug. */
export class StoreError extends MissionDataError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, 'E_STORE', ExitCode.Failure, options);
  }
}

/** The reference server cannot listen where it was asked to. */
export class ListenError extends MissionDataError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, 'E_LISTEN', ExitCode.Failure, options);
  }
}

/**
 * The classes' names as written here, whatever a bundler makes of the identifiers (one that another module
 * also uses gets renamed: `AbortedError` became `_AbortedError`): `err.name` and `String(err)` read them. Set
 * on these classes alone, rather than with the bundler's option that wraps every function it emits.
 */
for (const [name, type] of Object.entries({
  MissionDataError,
  ValidationError,
  UsageError,
  ConfigError,
  ApiError,
  NetworkError,
  ProtocolError,
  LocalFileError,
  InterruptedBySignal,
  AbortedError,
  BusyError,
  StoreError,
  ListenError,
})) {
  Object.defineProperty(type, 'name', { value: name });
}

/** True for errors this package throws on purpose (as opposed to bugs). */
export function isMissionDataError(error: unknown): error is MissionDataError {
  return error instanceof MissionDataError;
}
