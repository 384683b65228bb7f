import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  ApiError,
  ConfigError,
  ExitCode,
  InterruptedBySignal,
  isMissionDataError,
  LocalFileError,
  MissionDataError,
  NetworkError,
  ProtocolError,
  UsageError,
  ValidationError,
} from '../../src/core/errors.js';

describe('error classes', () => {
  it.each([
    [new ValidationError(['first', 'second']), 'ValidationError', 'E_VALIDATION', 2],
    [new UsageError('bad flag'), 'UsageError', 'E_USAGE', 2],
    [new ConfigError('bad file'), 'ConfigError', 'E_CONFIG', 2],
    [
      new ApiError({ method: 'GET', url: 'http://x/y', status: 404, message: 'Not here' }),
      'ApiError',
      'E_API',
      1,
    ],
    [new NetworkError('refused'), 'NetworkError', 'E_NETWORK', 1],
    [new ProtocolError('garbled'), 'ProtocolError', 'E_PROTOCOL', 1],
    [new LocalFileError('disk full'), 'LocalFileError', 'E_LOCAL_FILE', 1],
    [new AbortedError(), 'AbortedError', 'E_ABORTED', 130],
    [
      new AbortedError('Cancelled.', { cause: new InterruptedBySignal('SIGINT') }),
      'AbortedError',
      'E_ABORTED',
      130,
    ],
    [
      new AbortedError('Cancelled.', { cause: new InterruptedBySignal('SIGTERM') }),
      'AbortedError',
      'E_ABORTED',
      143,
    ],
  ])('%s has its name, stable code and exit status', (error, name, code, exitCode) => {
    expect(error).toBeInstanceOf(MissionDataError);
    expect(error).toBeInstanceOf(Error);
    expect(isMissionDataError(error)).toBe(true);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.exitCode).toBe(exitCode);
    expect(String(error.stack)).toContain(name);
  });

  it('uses 0 for success, 1 for a failed operation and 2 for usage and validation errors', () => {
    expect(ExitCode).toEqual({
      Success: 0,
      Failure: 1,
      Usage: 2,
      Busy: 75,
      Interrupted: 130,
      Terminated: 143,
      Hangup: 129,
      Break: 149,
    });
  });

  it('puts every problem of a ValidationError on its own line, in the order given', () => {
    const error = new ValidationError(['b comes first', 'a comes second']);
    expect(error.message).toBe('b comes first\na comes second');
    expect(error.problems).toEqual(['b comes first', 'a comes second']);
  });

  it('carries a hint and a cause when given, and a code override where allowed', () => {
    const cause = new Error('ECONNRESET');
    const error = new NetworkError('reset', { hint: 'try again', cause, code: 'E_TIMEOUT' });
    expect(error.hint).toBe('try again');
    expect(error.cause).toBe(cause);
    expect(error.code).toBe('E_TIMEOUT');
    expect(new UsageError('plain').hint).toBeUndefined();
    expect('cause' in new UsageError('plain')).toBe(false);
  });

  it('words API errors as method, URL and outcome', () => {
    expect(
      new ApiError({ method: 'GET', url: 'http://x/download/a', status: 404, message: 'File not found' })
        .message,
    ).toBe('GET http://x/download/a: 404 File not found');
  });

  it('does not count other errors as its own', () => {
    expect(isMissionDataError(new Error('bug'))).toBe(false);
    expect(isMissionDataError('text')).toBe(false);
  });
});
