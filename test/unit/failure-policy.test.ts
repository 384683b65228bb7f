/** The failure policy: which failures are tried again, how the attempts of a transfer are counted, what stops a batch. */
import { describe, expect, it } from 'vitest';
import { AbortedError, ApiError, LocalFileError, NetworkError } from '../../src/core/errors.js';
import { Attempts, batchWideReason, isRetryable, withRetries } from '../../src/core/failure-policy.js';

const service = (status: number) =>
  new ApiError({ method: 'GET', url: 'http://s/query', status, message: 'm' });
const store = (status: number, message = 'm', storeCode?: string, storeErrno?: string) =>
  new ApiError(
    { method: 'GET', url: 'http://b/k?…', status, message },
    { storeCode, storeErrno, peer: 'object store' },
  );
const reset = () => Object.assign(new Error('reset'), { code: 'ECONNRESET' });
const POLICY = { retries: 2, retryBaseMs: 1, maxRetryAfterMs: 10 };

describe('what is tried again', () => {
  it.each([429, 500, 502, 503, 504])('a %i of the service', (status) => {
    expect(isRetryable(service(status))).toBe(true);
  });

  it.each([400, 401, 403, 404, 409, 501, 505])('not a %i of the service', (status) => {
    expect(isRetryable(service(status))).toBe(false);
  });

  it.each(['RequestTimeout', 'SlowDown', 'InternalError', 'ServiceUnavailable'])(
    'the store code %s, whatever its status',
    (code) => {
      expect(isRetryable(store(400, 'm', code))).toBe(true);
    },
  );

  it("a store's plain 500, but not one that declares a failure of its own disk", () => {
    expect(isRetryable(store(500, 'Internal Server Error'))).toBe(true);
    for (const errno of ['EROFS', 'EACCES', 'EPERM', 'EIO', 'ENOSPC', 'EDQUOT']) {
      expect(isRetryable(store(500, 'nothing was stored', undefined, errno))).toBe(false);
    }
    expect(isRetryable(store(500, 'nothing was stored', undefined, 'EMFILE'))).toBe(true);
    expect(isRetryable(store(403, 'Request has expired', 'AccessDenied'))).toBe(false);
  });

  it("decides a store's disk failure from the errno it declared, never from the answer's words", () => {
    for (const errno of ['EROFS', 'ENOSPC']) {
      expect(isRetryable(store(500, `The store is full or read-only (${errno}); nothing was stored`))).toBe(
        true,
      );
    }
    expect(isRetryable(store(500, 'Internal server error', undefined, 'EROFS'))).toBe(false);
  });

  it('refused, reset and stalled connections to either side; not a cancellation, a local file or a bug', () => {
    expect(isRetryable(new NetworkError('x', { code: 'E_CONNECTION_REFUSED', peer: 'service' }))).toBe(true);
    expect(isRetryable(new NetworkError('x', { code: 'E_CONNECTION_REFUSED', peer: 'object store' }))).toBe(
      true,
    );
    expect(isRetryable(new NetworkError('x', { code: 'E_TIMEOUT' }))).toBe(true);
    expect(isRetryable(new NetworkError('x', { code: 'E_NETWORK', cause: reset() }))).toBe(true);
    expect(isRetryable(new NetworkError('x', { code: 'E_HOST_NOT_FOUND' }))).toBe(false);
    expect(isRetryable(reset())).toBe(true);
    expect(isRetryable(new AbortedError())).toBe(false);
    expect(isRetryable(new LocalFileError('disk'))).toBe(false);
    expect(isRetryable(new Error('bug'))).toBe(false);
  });
});

describe('how attempts are counted', () => {
  it('gives up after retries + 1 attempts in a row that brought nothing, saying how many', async () => {
    const attempts = new Attempts(POLICY, undefined);
    await attempts.failed(service(503));
    await attempts.failed(service(503));
    const last = service(503);
    await expect(attempts.failed(last)).rejects.toBe(last);
    expect(last.message).toMatch(/gave up after 3 attempts/);
  });

  it('an attempt that brought bytes starts the count again', async () => {
    const attempts = new Attempts(POLICY, undefined);
    for (let round = 0; round < 5; round += 1) {
      await attempts.failed(reset());
      await attempts.failed(reset());
      await attempts.failed(reset(), true);
    }
  });

  it('a failure not worth retrying is final at once, and a cancellation is an AbortedError', async () => {
    const attempts = new Attempts(POLICY, undefined);
    const refused = service(403);
    await expect(attempts.failed(refused)).rejects.toBe(refused);
    const controller = new AbortController();
    controller.abort();
    await expect(new Attempts(POLICY, controller.signal).failed(reset())).rejects.toBeInstanceOf(
      AbortedError,
    );
  });

  it('withRetries runs work until it succeeds within the retries', async () => {
    const seen: number[] = [];
    const result = await withRetries(POLICY, async (attempt) => {
      seen.push(attempt);
      if (attempt < 3) throw reset();
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe('what stops a batch', () => {
  it('an unreachable or refusing service, a data root that cannot take files, a full disk', () => {
    expect(batchWideReason(new NetworkError('x', { code: 'E_CONNECTION_REFUSED', peer: 'service' }))).toMatch(
      /could not be reached/,
    );
    expect(
      batchWideReason(
        new ApiError(
          { method: 'GET', url: 'http://s/upload/imap/x', status: 403, message: 'Forbidden' },
          { route: 'upload' },
        ),
      ),
    ).toMatch(/refused the API key/);
    expect(batchWideReason(new LocalFileError('x', { code: 'E_DATA_ROOT' }))).toMatch(/data root/);
    expect(batchWideReason(new LocalFileError('x', { code: 'E_NO_SPACE' }))).toMatch(/disk is full/);
  });

  it("a data root that cannot take files because its disk is full says the system's reason", () => {
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    expect(batchWideReason(new LocalFileError('x', { code: 'E_DATA_ROOT', cause: full }))).toBe(
      'the disk is full',
    );
    const readOnly = Object.assign(new Error('read-only file system'), { code: 'EROFS' });
    expect(batchWideReason(new LocalFileError('x', { code: 'E_DATA_ROOT', cause: readOnly }))).toBe(
      'the data root is read-only',
    );
  });

  it('not a failure of one file: a 404, a 403 of the object store, a checksum', () => {
    expect(batchWideReason(service(404))).toBeUndefined();
    expect(batchWideReason(store(403, 'Request has expired', 'AccessDenied'))).toBeUndefined();
    expect(batchWideReason(new LocalFileError('x', { code: 'E_CHECKSUM' }))).toBeUndefined();
  });

  it("decides a refused key from the route the client asked, never from the URL's words", () => {
    const refused = (url: string, route?: 'upload' | 'download' | 'query') =>
      new ApiError({ method: 'GET', url, status: 401, message: 'Unauthorized' }, { route });
    expect(batchWideReason(refused('http://s/api-key/x', 'download'))).toMatch(/asked for an API key/);
    expect(batchWideReason(refused('http://s/upload/imap/x'))).toBeUndefined();
    expect(batchWideReason(refused('http://s/download/imap/x', 'query'))).toBeUndefined();
  });
});
