/** Error classes shared by the library and the command line: each has a stable `code` and an exit status. */

/** Exit statuses of the command line. */
export const ExitCode = {
  Success: 0,
  Failure: 1,
  Usage: 2,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface ErrorOptions {
  hint?: string | undefined;
  cause?: unknown;
}

/** Base class of every error this package throws on purpose. */
export class MissionDataError extends Error {
  /** A stable, machine-readable identifier, e.g. `E_VALIDATION`. */
  readonly code: string;
  /** What the user can do about it, printed under the message. */
  readonly hint: string | undefined;
  /** The exit status the command line ends with. */
  readonly exitCode: ExitCodeValue;

  constructor(message: string, code: string, exitCode: ExitCodeValue, options: ErrorOptions = {}) {
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

  constructor(problems: readonly string[], options: ErrorOptions = {}) {
    super(problems.join('\n'), 'E_VALIDATION', ExitCode.Usage, options);
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
  readonly status: number;
  readonly method: string;
  readonly url: string;

  constructor(
    details: { method: string; url: string; status: number; message: string },
    options: ErrorOptions & { code?: string } = {},
  ) {
    super(
      `${details.method} ${details.url}: ${details.status} ${details.message}`,
      options.code ?? 'E_API',
      ExitCode.Failure,
      options,
    );
    this.status = details.status;
    this.method = details.method;
    this.url = details.url;
  }
}

/** The service could not be reached, or the connection failed or timed out. */
export class NetworkError extends MissionDataError {
  constructor(message: string, options: ErrorOptions & { code?: string } = {}) {
    super(message, options.code ?? 'E_NETWORK', ExitCode.Failure, options);
  }
}

/** Code of a file a batch left alone because an earlier one showed the service cannot be reached. */
export const NOT_ATTEMPTED = 'E_NOT_ATTEMPTED';

/** The service answered something this client cannot read or must not trust. */
export class ProtocolError extends MissionDataError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, 'E_PROTOCOL', ExitCode.Failure, options);
  }
}

/** A local file could not be read or written. */
export class LocalFileError extends MissionDataError {
  constructor(message: string, options: ErrorOptions & { code?: string } = {}) {
    super(message, options.code ?? 'E_LOCAL_FILE', ExitCode.Failure, options);
  }
}

/** The operation was cancelled by an `AbortSignal` or by Ctrl-C. */
export class AbortedError extends MissionDataError {
  constructor(message = 'Cancelled.', options: ErrorOptions = {}) {
    super(message, 'E_ABORTED', ExitCode.Failure, options);
  }
}

/** True for errors this package throws on purpose (as opposed to bugs). */
export function isMissionDataError(error: unknown): error is MissionDataError {
  return error instanceof MissionDataError;
}
