import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { HttpResponse, http, type RequestHandler } from 'msw';
import { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { commandLineHint } from '../../src/cli/hints.js';
import {
  AbortedError,
  ApiError,
  NetworkError,
  ProtocolError,
  ValidationError,
} from '../../src/core/errors.js';
import { parseRetryAfter, readEnvelope } from '../../src/http/envelope.js';
import { HttpClient } from '../../src/service/client.js';
import type { HttpClientOptions } from '../../src/service/types.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { bytesUpload } from '../helpers/uploads.js';

const API = 'http://api.test';
const STORE = 'http://store.test';
const NAME = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const PATH = `imap/mag/l1a/2025/01/${NAME}`;
const OBJECT_URL = `${STORE}/objects/${PATH}?expires=1999999999&signature=secret-signature`;
const RECORD = {
  file_path: PATH,
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm-mago',
  start_date: '20250101',
  end_date: '20250101',
  version: 'v01-00',
  extension: 'cdf',
  ingestion_date: '2025-01-02 03:04:05',
};

/** An outcome as the service's Lambda returns it. */
interface Outcome {
  statusCode: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** Every way an outcome reaches the client: the envelope's readings and the unwrapped gateway forms. */
const WIRE_FORMS: ReadonlyArray<readonly [string, (outcome: Outcome) => Response]> = [
  [
    'envelope, HTTP status = statusCode',
    (o) =>
      HttpResponse.json(
        { statusCode: o.statusCode, headers: o.headers ?? {}, body: o.body },
        { status: o.statusCode },
      ),
  ],
  [
    'envelope with a JSON-encoded body string',
    (o) =>
      HttpResponse.json(
        { statusCode: o.statusCode, headers: o.headers ?? {}, body: JSON.stringify(o.body) },
        { status: o.statusCode },
      ),
  ],
  [
    'envelope, always HTTP 200',
    (o) =>
      HttpResponse.json(
        { statusCode: o.statusCode, headers: o.headers ?? {}, body: o.body },
        { status: 200 },
      ),
  ],
  [
    'envelope, always HTTP 200, JSON-encoded body, no headers',
    (o) => HttpResponse.json({ statusCode: o.statusCode, body: JSON.stringify(o.body) }, { status: 200 }),
  ],
  [
    'gateway, strings as plain text',
    (o) =>
      typeof o.body === 'string'
        ? new HttpResponse(o.body, {
            status: o.statusCode,
            headers: { 'content-type': 'text/plain', ...o.headers },
          })
        : HttpResponse.json(o.body as object, { status: o.statusCode, headers: o.headers ?? {} }),
  ],
  [
    'gateway, strings JSON-encoded',
    (o) =>
      new HttpResponse(JSON.stringify(o.body), {
        status: o.statusCode,
        headers: { 'content-type': 'application/json', ...o.headers },
      }),
  ],
];

function client(handlers: RequestHandler[], options: Partial<HttpClientOptions> = {}) {
  const dispatcher = new MswDispatcher(handlers);
  return { http: new HttpClient({ url: API, dispatcher, retryBaseMs: 1, ...options }), dispatcher };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to fail');
}

describe.each(WIRE_FORMS)('answers of the API, %s', (_name, wire) => {
  it('GET /upload: the pre-signed URL', async () => {
    const { http: c } = client([
      http.get(`${API}/upload/*`, () => wire({ statusCode: 200, body: OBJECT_URL })),
    ]);
    expect(await c.presignUpload(PATH)).toBe(OBJECT_URL);
  });

  it('GET /upload: 409 already exists', async () => {
    const { http: c } = client([
      http.get(`${API}/upload/*`, () =>
        wire({ statusCode: 409, body: `${STORE}/objects/${PATH} already exists.` }),
      ),
    ]);
    const error = await failure(c.presignUpload(PATH));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'E_ALREADY_EXISTS', status: 409 });
    expect(error.message).toBe(`upload ${PATH}: 409 ${STORE}/objects/${PATH} already exists.`);
  });

  it('GET /upload: 400 with the naming message', async () => {
    const { http: c } = client([
      http.get(`${API}/upload/*`, () =>
        wire({ statusCode: 400, body: 'Invalid version format. Please use vxx-xx format.' }),
      ),
    ]);
    const error = await failure(c.presignUpload(NAME));
    expect(error).toMatchObject({ code: 'E_API', status: 400 });
    expect(error.message).toBe(`upload ${NAME}: 400 Invalid version format. Please use vxx-xx format.`);
  });

  it('GET /download: the object URL from Location and download_url', async () => {
    const { http: c } = client([
      http.get(`${API}/download/*`, () =>
        wire({
          statusCode: 302,
          headers: { 'Content-Type': 'text/html', Location: OBJECT_URL },
          body: { download_url: OBJECT_URL },
        }),
      ),
    ]);
    expect(await c.resolveDownload(PATH)).toBe(OBJECT_URL);
  });

  it('GET /download: the object URL from download_url alone', async () => {
    const { http: c } = client([
      http.get(`${API}/download/*`, () => wire({ statusCode: 302, body: { download_url: OBJECT_URL } })),
    ]);
    expect(await c.resolveDownload(PATH)).toBe(OBJECT_URL);
  });

  it('GET /download: 404 file not found', async () => {
    const message =
      'File not found, make sure you include the full path to the file in the request, e.g. /download/path/to/file/filename.pkts.';
    const { http: c } = client([
      http.get(`${API}/download/*`, () => wire({ statusCode: 404, body: message })),
    ]);
    const error = await failure(c.resolveDownload(PATH));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'E_NOT_FOUND', status: 404 });
    expect(error.message).toBe(`the archive holds no such file (404 from GET ${API}/download/${PATH})`);
    expect(error.message).not.toContain('include the full path');
  });

  it('GET /query: the records, as received', async () => {
    const records = [RECORD, { ...RECORD, extra: 'kept', end_date: null }];
    const { http: c, dispatcher } = client([
      http.get(`${API}/query`, () =>
        wire({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: records }),
      ),
    ]);
    expect(await c.query({ instrument: 'mag', version: 'latest' })).toEqual(records);
    expect(dispatcher.requests[0]?.url).toBe(
      `${API}/query?instrument=mag&version=latest&offset=0&limit=10000`,
    );
  });

  it('GET /query: nothing matches', async () => {
    const { http: c } = client([http.get(`${API}/query`, () => wire({ statusCode: 200, body: [] }))]);
    expect(await c.query({ instrument: 'mag' })).toEqual([]);
  });

  it('GET /query: 400 unknown parameter', async () => {
    const { http: c } = client([
      http.get(`${API}/query`, () =>
        wire({ statusCode: 400, body: 'start_date is not a valid query parameter.' }),
      ),
    ]);
    const error = await failure(c.query({ start_date: '20250101' }));
    expect(error.message).toBe(
      `GET ${API}/query?start_date=20250101&offset=0&limit=10000: 400 start_date is not a valid query parameter.`,
    );
  });

  it('a 502 in this form is retried, then succeeds', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/query`, () => {
        calls += 1;
        return calls <= 2
          ? wire({ statusCode: 502, body: 'Bad Gateway' })
          : wire({ statusCode: 200, body: [RECORD] });
      }),
    ]);
    expect(await c.query({ instrument: 'mag' })).toEqual([RECORD]);
    expect(calls).toBe(3);
  });

  it('a 502 on every attempt ends after the 4th with a clear error, at /download and at /upload', async () => {
    const calls = { download: 0, upload: 0 };
    const { http: c } = client([
      http.get(`${API}/download/*`, () => {
        calls.download += 1;
        return wire({ statusCode: 502, body: 'Bad Gateway' });
      }),
      http.get(`${API}/upload/*`, () => {
        calls.upload += 1;
        return wire({ statusCode: 502, body: 'Internal server error' });
      }),
    ]);
    const download = await failure(c.resolveDownload(PATH));
    expect(download).toBeInstanceOf(ApiError);
    expect(download.message).toBe(`GET ${API}/download/${PATH}: 502 Bad Gateway (gave up after 4 attempts)`);
    expect((download as ApiError).hint).toMatch(/temporarily down/);
    const upload = await failure(c.presignUpload(PATH));
    expect(upload.message).toBe(`upload ${PATH}: 502 Internal server error (gave up after 4 attempts)`);
    expect(calls).toEqual({ download: 4, upload: 4 });
  });

  it.each([429, 503, 504])('a %i is retried like a 502', async (status) => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/download/*`, () => {
        calls += 1;
        return calls === 1
          ? wire({ statusCode: status, body: 'try later' })
          : wire({ statusCode: 302, headers: { Location: OBJECT_URL }, body: { download_url: OBJECT_URL } });
      }),
    ]);
    expect(await c.resolveDownload(PATH)).toBe(OBJECT_URL);
    expect(calls).toBe(2);
  });

  it('an HTML error page is reported by its title, not its markup', async () => {
    const page =
      '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';
    const { http: c } = client([http.get(`${API}/query`, () => wire({ statusCode: 502, body: page }))], {
      retries: 0,
    });
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error.message).toBe(`GET ${API}/query?instrument=mag&offset=0&limit=10000: 502 Bad Gateway`);
  });
});

describe('retries', () => {
  it('gives up after the last of 4 attempts on a 502 that never ends, with a clear error', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/query`, () => {
        calls += 1;
        return new HttpResponse('Bad Gateway', { status: 502 });
      }),
    ]);
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(calls).toBe(4);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toBe(
      `GET ${API}/query?instrument=mag&offset=0&limit=10000: 502 Bad Gateway (gave up after 4 attempts)`,
    );
    expect((error as ApiError).hint).toMatch(/temporarily down/);
  });

  it('honours the retries option', async () => {
    let calls = 0;
    const { http: c } = client(
      [
        http.get(`${API}/download/*`, () => {
          calls += 1;
          return HttpResponse.json({ statusCode: 503, body: 'Service Unavailable' });
        }),
      ],
      { retries: 1 },
    );
    await expect(c.resolveDownload(PATH)).rejects.toThrow(
      /503 Service Unavailable \(gave up after 2 attempts\)/,
    );
    expect(calls).toBe(2);
  });

  it('does not retry statuses that will not change (400, 404, 409)', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/download/*`, () => {
        calls += 1;
        return new HttpResponse('File not found', { status: 404 });
      }),
    ]);
    await expect(c.resolveDownload(PATH)).rejects.toMatchObject({ status: 404 });
    expect(calls).toBe(1);
  });

  it('waits as long as Retry-After asks (in seconds), within the cap', async () => {
    const lines: string[] = [];
    let calls = 0;
    const { http: c } = client(
      [
        http.get(`${API}/query`, () => {
          calls += 1;
          if (calls === 1)
            return new HttpResponse('Slow down', { status: 429, headers: { 'Retry-After': '0' } });
          if (calls === 2)
            return new HttpResponse('Slow down', { status: 429, headers: { 'Retry-After': '120' } });
          return HttpResponse.json([RECORD]);
        }),
      ],
      { retryBaseMs: 5000, maxRetryAfterMs: 3, log: (line) => lines.push(line) },
    );
    expect(await c.query({ instrument: 'mag' })).toEqual([RECORD]);
    const retries = lines.filter((line) => line.startsWith('retry'));
    // A base of 5 s would have waited seconds; Retry-After 0 and the 3 ms cap decide instead.
    expect(retries[0]).toMatch(/^retry 1\/3 in 0 ms: .*429 Slow down/);
    expect(retries[1]).toMatch(/^retry 2\/3 in 3 ms: /);
  });

  it('honours a Retry-After that only the envelope carries (HTTP 200 wire)', async () => {
    const lines: string[] = [];
    let calls = 0;
    const { http: c } = client(
      [
        http.get(`${API}/query`, () => {
          calls += 1;
          return calls === 1
            ? HttpResponse.json({ statusCode: 503, headers: { 'Retry-After': '0' }, body: 'Busy' })
            : HttpResponse.json({ statusCode: 200, body: [RECORD] });
        }),
      ],
      { retryBaseMs: 60_000, log: (line) => lines.push(line) },
    );
    expect(await c.query({ instrument: 'mag' })).toEqual([RECORD]);
    expect(lines.filter((line) => line.startsWith('retry'))).toEqual([
      expect.stringMatching(/^retry 1\/3 in 0 ms: .*503 Busy/),
    ]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('retries a connection closed without an answer', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/query`, () => {
        calls += 1;
        return calls === 1 ? HttpResponse.error() : HttpResponse.json([RECORD]);
      }),
    ]);
    expect(await c.query({ instrument: 'mag' })).toEqual([RECORD]);
    expect(calls).toBe(2);
  });

  it('reports a connection closed on every attempt as a network error', async () => {
    const { http: c } = client([http.get(`${API}/query`, () => HttpResponse.error())]);
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK' });
    expect(error.message).toBe(
      `GET ${API}/query?instrument=mag&offset=0&limit=10000: the connection was closed or reset (HTTP_CONNECTION_CLOSED). (gave up after 4 attempts)`,
    );
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const { http: c } = client(
      [
        http.get(`${API}/query`, () => {
          controller.abort();
          return new HttpResponse('Bad Gateway', { status: 502 });
        }),
      ],
      { retryBaseMs: 60_000 },
    );
    await expect(c.query({ instrument: 'mag' }, controller.signal)).rejects.toBeInstanceOf(AbortedError);
  });

  it('retries a 500 of the service twice and then takes its 200', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${API}/query`, () => {
        calls += 1;
        return calls <= 2
          ? HttpResponse.json({ statusCode: 500, body: 'Internal Server Error' })
          : HttpResponse.json([]);
      }),
    ]);
    expect(await c.query({ instrument: 'mag' })).toEqual([]);
    expect(calls).toBe(3);
  });

  it('retry() runs caller work with the same policy', async () => {
    const { http: c } = client([]);
    const attempts: number[] = [];
    const result = await c.retry(async (attempt) => {
      attempts.push(attempt);
      if (attempt < 3) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
      return 'done';
    });
    expect(result).toBe('done');
    expect(attempts).toEqual([1, 2, 3]);
  });
});

describe('answers that cannot be read or trusted', () => {
  it('a non-JSON query answer is a protocol error naming the URL', async () => {
    const { http: c } = client([
      http.get(`${API}/query`, () => HttpResponse.html('<html><body>Sign in to the portal</body></html>')),
    ]);
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain(
      `GET ${API}/query?instrument=mag&offset=0&limit=10000: expected a JSON array of file records`,
    );
    expect(error.message).toContain('Sign in to the portal');
  });

  it('a query answer that is an object is refused', async () => {
    const { http: c } = client([http.get(`${API}/query`, () => HttpResponse.json({ items: [RECORD] }))]);
    await expect(c.query({ instrument: 'mag' })).rejects.toThrow(
      `GET ${API}/query?instrument=mag&offset=0&limit=10000: expected a JSON array of file records, got an object with keys items.`,
    );
  });

  it('a record without its fields is refused, naming the record and field', async () => {
    const { http: c } = client([
      http.get(`${API}/query`, () => HttpResponse.json([RECORD, { file_path: PATH, instrument: 'mag' }])),
    ]);
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(
      new RegExp(
        `^GET ${API}/query\\?instrument=mag&offset=0&limit=10000: record 2 is not a file record \\(field descriptor: `,
      ),
    );
  });

  it('an envelope with an impossible statusCode is refused', () => {
    expect(() => readEnvelope(200, {}, '{"statusCode":7,"body":""}', `GET ${API}/query`)).toThrow(
      ProtocolError,
    );
  });

  it.each([
    ['../../etc/passwd', /unsafe \(it contains a '\.\.' segment\)/],
    ['/etc/passwd', /unsafe \(it is absolute/],
    [`imap/mag/l1a/2025/01/..%2F..%2F${NAME}`, /unsafe/],
    [`imap/mag/l1a/2025/01/../../../../${NAME}`, /unsafe/],
    [
      `imap/mag/l1b/2024/12/${NAME}`,
      /not a valid storage path \(Invalid path .*expected imap\/mag\/l1a\/2025\/01\//,
    ],
    ['notes.txt', /not a valid storage path/],
  ])('a record whose file_path is %s is refused', async (filePath, reason) => {
    const { http: c } = client([
      http.get(`${API}/query`, () => HttpResponse.json([RECORD, { ...RECORD, file_path: filePath }])),
    ]);
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(
      new RegExp(
        `^GET ${API}/query\\?instrument=mag&offset=0&limit=10000: refusing record 2: its file_path `,
      ),
    );
    expect(error.message).toMatch(reason);
  });

  it.each([
    'file:///etc/passwd',
    'ftp://store.test/objects/x',
    'javascript:alert(1)',
    'http://user:password@store.test/objects/x',
  ])('a download redirect to %s is refused', async (location) => {
    const { http: c } = client([
      http.get(`${API}/download/*`, () =>
        HttpResponse.json({
          statusCode: 302,
          headers: { Location: location },
          body: { download_url: location },
        }),
      ),
    ]);
    const error = await failure(c.resolveDownload(PATH));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(new RegExp(`^GET ${API}/download/${PATH}: refusing the download URL`));
  });

  it('a relative Location resolves against the API URL', async () => {
    const { http: c } = client([
      http.get(
        `${API}/download/*`,
        () => new HttpResponse(null, { status: 302, headers: { Location: '/objects/x?sig=1' } }),
      ),
    ]);
    expect(await c.resolveDownload(PATH)).toBe(`${API}/objects/x?sig=1`);
  });

  it('a download answer naming no URL is refused', async () => {
    const { http: c } = client([
      http.get(`${API}/download/*`, () => HttpResponse.json({ statusCode: 302, body: {} })),
    ]);
    await expect(c.resolveDownload(PATH)).rejects.toThrow(
      `GET ${API}/download/${PATH}: the answer (302) names no file URL (no Location header, no download_url); got an object with keys (none).`,
    );
  });

  it('an upload answer that is not a URL string is refused', async () => {
    const { http: c } = client([
      http.get(`${API}/upload/*`, () => HttpResponse.json({ statusCode: 200, body: { url: 1 } })),
    ]);
    await expect(c.presignUpload(PATH)).rejects.toThrow(
      `GET ${API}/upload/${PATH}: expected the pre-signed upload URL, got an object with keys url.`,
    );
    const { http: other } = client([
      http.get(`${API}/upload/*`, () => HttpResponse.text('ftp://store.test/x')),
    ]);
    await expect(other.presignUpload(PATH)).rejects.toThrow(
      /refusing the upload URL "ftp:\/\/store.test\/x"/,
    );
  });

  it('a non-JSON answer of /upload or /download is a protocol error naming the URL', async () => {
    const login = '<html><body>Sign in to the portal</body></html>';
    const { http: c } = client([
      http.get(`${API}/upload/*`, () => HttpResponse.html(login)),
      http.get(`${API}/download/*`, () => HttpResponse.html(login)),
    ]);
    const upload = await failure(c.presignUpload(PATH));
    expect(upload).toBeInstanceOf(ProtocolError);
    expect(upload.message).toMatch(
      new RegExp(
        `^GET ${API}/upload/${PATH}: refusing the upload URL "<html>.*Sign in.*": it is not a URL\\.$`,
      ),
    );
    const download = await failure(c.resolveDownload(PATH));
    expect(download).toBeInstanceOf(ProtocolError);
    expect(download.message).toBe(
      `GET ${API}/download/${PATH}: the answer (200) names no file URL (no Location header, no download_url); got the text "${login}".`,
    );
  });

  it('a JSON answer of the wrong shape is a protocol error naming the URL', async () => {
    const { http: c } = client([
      http.get(`${API}/query`, () => HttpResponse.json({ statusCode: 200, body: 'no records today' })),
      http.get(`${API}/download/*`, () => HttpResponse.json({ statusCode: 302, body: { download_url: 42 } })),
    ]);
    await expect(c.query({ instrument: 'mag' })).rejects.toThrow(
      `GET ${API}/query?instrument=mag&offset=0&limit=10000: expected a JSON array of file records, got the text "no records today".`,
    );
    await expect(c.resolveDownload(PATH)).rejects.toThrow(
      new RegExp(`^GET ${API}/download/${PATH}: the answer \\(302\\) names no file URL`),
    );
  });

  it('an answer cut inside its JSON is said to be no valid JSON, where and why, whatever its size', async () => {
    const record = JSON.stringify({
      file_path: 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf',
    });
    for (const text of [`[${record},${record.slice(0, 30)}`, `{"statusCode": 200, "body": [${record}`]) {
      const { http: c } = client([
        http.get(
          `${API}/query`,
          () => new HttpResponse(text, { headers: { 'content-type': 'application/json' } }),
        ),
      ]);
      const error = await failure(c.query({ instrument: 'mag' }));
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error.message).toMatch(
        new RegExp(
          `^GET ${API}/query\\?instrument=mag&offset=0&limit=10000: the answer is not valid JSON: .+\\.$`,
        ),
      );
    }
  });

  it('unsafe paths and bad query values are refused before any request', async () => {
    const { http: c, dispatcher } = client([]);
    await expect(c.resolveDownload('../secret')).rejects.toBeInstanceOf(ValidationError);
    await expect(c.presignUpload('/etc/passwd')).rejects.toBeInstanceOf(ValidationError);
    const error = await failure(c.query({ start_date: '20250230', instrument: 'nope' }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems).toEqual([
      'Invalid start_date "20250230": 20250230 is not a date of the calendar (February has 28 days in 2025).',
      expect.stringMatching(/^Invalid instrument\. Please choose from/),
    ]);
    expect(dispatcher.requests).toEqual([]);
  });
});

describe('the API key', () => {
  it('goes to every /api-key/ route of the service and never to the object URL', async () => {
    const content = Buffer.from('bytes of the file');
    const { http: c, dispatcher } = client(
      [
        http.get(`${API}/api-key/upload/*`, () => HttpResponse.json({ statusCode: 200, body: OBJECT_URL })),
        http.put(
          `${STORE}/objects/*`,
          () => new HttpResponse(null, { status: 200, headers: { ETag: '"e1"' } }),
        ),
        http.get(`${API}/api-key/download/*`, () =>
          HttpResponse.json({ statusCode: 302, headers: { Location: OBJECT_URL }, body: {} }),
        ),
        http.get(`${STORE}/objects/*`, () => new HttpResponse(content)),
        http.get(`${API}/api-key/query`, () => HttpResponse.json([RECORD])),
      ],
      { apiKey: 'key-123' },
    );
    const target = await c.presignUpload(PATH);
    await c.putObject(target, bytesUpload(content));
    await c.getObject(await c.resolveDownload(PATH)).then((r) => r.body.dump());
    await c.query({ instrument: 'mag' });
    const seen = dispatcher.requests.map((r) => [
      r.method,
      new URL(r.url).pathname.split('/')[1],
      r.headers.get('x-api-key'),
    ]);
    expect(seen).toEqual([
      ['GET', 'api-key', 'key-123'],
      ['PUT', 'objects', null],
      ['GET', 'api-key', 'key-123'],
      ['GET', 'objects', null],
      ['GET', 'api-key', 'key-123'],
    ]);
    expect(dispatcher.requests.some((r) => r.headers.get('authorization') !== null)).toBe(false);
  });

  it('a 403 at /upload hints at the API key', async () => {
    const { http: c } = client([
      http.get(`${API}/upload/*`, () => HttpResponse.json({ message: 'Forbidden' }, { status: 403 })),
    ]);
    const error = await failure(c.presignUpload(PATH));
    expect(error.message).toBe(`upload ${PATH}: 403 Forbidden`);
    expect((error as ApiError).hint).toBe('Uploads need a valid API key.');
    expect(commandLineHint(error)).toMatch(/^Uploads need a valid API key: pass --api-key.*MISSION_API_KEY/);
  });
});

describe('object transfers', () => {
  it('PUT streams the body with Content-Length and Content-MD5 and returns the ETag', async () => {
    const content = Buffer.alloc(300_000, 7);
    const md5 = createHash('md5').update(content).digest('base64');
    const sent: number[] = [];
    const { http: c, dispatcher } = client([
      http.put(
        `${STORE}/objects/*`,
        () => new HttpResponse(null, { status: 200, headers: { ETag: '"abc"' } }),
      ),
    ]);
    const result = await c.putObject(OBJECT_URL, {
      ...bytesUpload(content, [content.subarray(0, 100_000), content.subarray(100_000)]),
      contentMd5: md5,
      onBytes: (n) => sent.push(n),
    });
    expect(result).toEqual({ etag: '"abc"' });
    const request = dispatcher.requests[0];
    expect(request?.body.equals(content)).toBe(true);
    expect(request?.headers.get('content-length')).toBe(String(content.length));
    expect(request?.headers.get('content-md5')).toBe(md5);
    expect(sent.at(-1)).toBe(content.length);
  });

  it('a PUT is one attempt; retried by the policy, it reopens the file and sends it whole again', async () => {
    const content = Buffer.from('the whole file');
    let opened = 0;
    let calls = 0;
    const bodies: string[] = [];
    const { http: c } = client([
      http.put(`${STORE}/objects/*`, async ({ request }) => {
        calls += 1;
        bodies.push(await request.text());
        return calls <= 2
          ? new HttpResponse('Slow Down', { status: 503 })
          : new HttpResponse(null, { status: 200 });
      }),
    ]);
    const put = () =>
      c.putObject(OBJECT_URL, {
        ...bytesUpload(content),
        open: () => {
          opened += 1;
          return Readable.from([content]);
        },
      });
    await expect(put()).rejects.toMatchObject({ status: 503 });
    await c.retry(put);
    expect(opened).toBe(3);
    expect(bodies).toEqual(['the whole file', 'the whole file', 'the whole file']);
  });

  it('a refused PUT says method, URL without its credentials, status and message', async () => {
    const { http: c } = client([
      http.put(`${STORE}/objects/*`, () => new HttpResponse('Signature expired', { status: 403 })),
    ]);
    const error = await failure(c.putObject(OBJECT_URL, bytesUpload(Buffer.from('x'))));
    expect(error.message).toBe(`PUT ${STORE}/objects/${PATH}?…: 403 Signature expired`);
    expect(error.message).not.toContain('secret-signature');
    expect((error as ApiError).hint).toMatch(/expired/);
  });

  it('GET asks for a Range when resuming and hands back status, headers and body', async () => {
    const { http: c, dispatcher } = client([
      http.get(`${STORE}/objects/*`, ({ request }) =>
        request.headers.get('range') === 'bytes=5-'
          ? new HttpResponse('56789', { status: 206, headers: { 'Content-Range': 'bytes 5-9/10' } })
          : new HttpResponse('0123456789'),
      ),
    ]);
    const whole = await c.getObject(OBJECT_URL);
    expect(whole.status).toBe(200);
    expect(await whole.body.bytes(1024, () => undefined)).toEqual(Buffer.from('0123456789'));
    const rest = await c.getObject(OBJECT_URL, { start: 5 });
    expect(rest.status).toBe(206);
    expect(rest.headers['content-range']).toBe('bytes 5-9/10');
    expect(await rest.body.bytes(1024, () => undefined)).toEqual(Buffer.from('56789'));
    expect(dispatcher.requests.map((r) => r.headers.get('range'))).toEqual([null, 'bytes=5-']);
  });

  it('GET of a missing object is E_NOT_FOUND; retried by the policy, a 502 is asked again first', async () => {
    let calls = 0;
    const { http: c } = client([
      http.get(`${STORE}/objects/*`, () => {
        calls += 1;
        return calls === 1
          ? new HttpResponse('Bad Gateway', { status: 502 })
          : new HttpResponse('NoSuchKey', { status: 404 });
      }),
    ]);
    const error = await failure(c.retry(() => c.getObject(OBJECT_URL)));
    expect(error).toMatchObject({ code: 'E_NOT_FOUND', status: 404 });
    expect(error.message).toBe(`GET ${STORE}/objects/${PATH}?…: 404 NoSuchKey`);
    expect(calls).toBe(2);
  });

  it("an object store's XML error is reported by its code and message", async () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message><RequestId>1</RequestId></Error>';
    const { http: c } = client([
      http.put(`${STORE}/objects/*`, () => new HttpResponse(xml, { status: 403 })),
    ]);
    const error = await failure(c.putObject(OBJECT_URL, bytesUpload(Buffer.from('x'))));
    expect(error.message).toBe(`PUT ${STORE}/objects/${PATH}?…: 403 AccessDenied: Request has expired`);
  });

  it('refuses object URLs that are not http(s)', async () => {
    const { http: c } = client([]);
    await expect(c.getObject('file:///etc/passwd')).rejects.toBeInstanceOf(ProtocolError);
    await expect(c.putObject('ftp://x/y', bytesUpload(Buffer.alloc(0)))).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });
});

describe('transport errors', () => {
  /** A transport whose every request fails with `error`, as a TLS handshake or a socket would. */
  class FailingDispatcher extends Dispatcher {
    calls = 0;
    constructor(private readonly error: Error) {
      super();
    }
    override dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      this.calls += 1;
      queueMicrotask(() => (handler as { onError(error: Error): void }).onError(this.error));
      return true;
    }
  }

  it('a certificate failure hints at the local root certificates and NODE_EXTRA_CA_CERTS', async () => {
    const dispatcher = new FailingDispatcher(
      Object.assign(new Error('unable to get local issuer certificate'), {
        code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      }),
    );
    const c = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'E_CERTIFICATE' });
    expect(error.message).toMatch(
      new RegExp(
        `^GET ${API}/query\\?instrument=mag&offset=0&limit=10000: the server's certificate could not be verified`,
      ),
    );
    expect((error as NetworkError).hint).toMatch(/root certificates were not found.*NODE_EXTRA_CA_CERTS/);
    expect(dispatcher.calls).toBe(1);
  });

  it('a refused connection to the object store does not blame the configured service URL', async () => {
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const c = new HttpClient({ url: API, dispatcher: new FailingDispatcher(refused()), retryBaseMs: 1 });
    const toService = await failure(c.query({ instrument: 'mag' }));
    expect(toService).toMatchObject({ code: 'E_CONNECTION_REFUSED' });
    expect((toService as NetworkError).hint).toMatch(/service URL in use\.$/);
    expect(commandLineHint(toService)).toMatch(/service URL in use; change it with --url/);
    const toStore = await failure(c.getObject(OBJECT_URL));
    expect(toStore).toMatchObject({ code: 'E_CONNECTION_REFUSED' });
    // A store that refuses connections may be restarting: it is asked again before the failure is told.
    expect(toStore.message).toMatch(
      /^GET http:\/\/store\.test\/objects\/.*\?…: connection refused \(nothing is listening at store\.test\)\.( \(gave up after \d+ attempts\))?$/,
    );
    expect((toStore as NetworkError).hint).toMatch(/^The service sent this address of its object store/);
    expect(commandLineHint(toStore)).not.toMatch(/--url/);
  });

  it('https to a plain http server says so on one line, with how to change the URL', async () => {
    const dispatcher = new FailingDispatcher(
      Object.assign(
        new Error(
          '80:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:\n  ssl3_record.c:354:\n',
        ),
        { code: 'ERR_SSL_WRONG_VERSION_NUMBER' },
      ),
    );
    const c = new HttpClient({ url: 'https://api.test', dispatcher, retryBaseMs: 1 });
    const error = await failure(c.query({ instrument: 'mag' }));
    expect(error).toMatchObject({ code: 'E_TLS' });
    expect(error.message).toBe(
      'GET https://api.test/query?instrument=mag&offset=0&limit=10000: the TLS handshake with api.test failed (ERR_SSL_WRONG_VERSION_NUMBER).',
    );
    expect((error as NetworkError).hint).toMatch(/use an http:\/\/ URL/);
    expect(dispatcher.calls).toBe(1);
  });

  it('a timeout while connecting is retried and then reported with the time allowed', async () => {
    const dispatcher = new FailingDispatcher(
      Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
    );
    const c = new HttpClient({ url: API, dispatcher, retryBaseMs: 1, timeoutMs: 1500 });
    const error = await failure(c.resolveDownload(PATH));
    expect(error).toMatchObject({ code: 'E_TIMEOUT' });
    expect(error.message).toBe(
      `GET ${API}/download/${PATH}: could not connect to api.test within 1.5 s. (gave up after 4 attempts)`,
    );
    expect(dispatcher.calls).toBe(4);
  });
});
