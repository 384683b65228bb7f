/**
 * A large query page read a run of records at a time (`HttpClient.queryFilePages`, which `status` and `coverage`
 * take their archive side from): every file comes once and in the service's order whichever wire form carried
 * the page, in parts smaller than the page; a record refused, or text that is not JSON, in the middle of a page
 * is a `ProtocolError` naming where, after the parts before it; a service that sends its one large page again
 * gives each file once; the count of newer naming forms covers every part; and over the client's own
 * connections, where each page is read into the buffer the page before it was, every page comes whole.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ProtocolError } from '../../src/core/errors.js';
import type { MissionFile } from '../../src/naming/names.js';
import { toQueryParams } from '../../src/naming/query-params.js';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { HttpClient } from '../../src/service/client.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { manyRecords } from '../helpers/records.js';

const API = 'http://api.test';
const PARAMS = toQueryParams({ instrument: 'mag' });

/** A service answering every query with `text` as the HTTP body (status `status`). */
function serviceOf(text: (offset: number) => string, status = 200) {
  return new MswDispatcher([
    http.get(`${API}/query`, ({ request }) => {
      const offset = Number(new URL(request.url).searchParams.get('offset') ?? 0);
      return new HttpResponse(text(offset), { status, headers: { 'content-type': 'application/json' } });
    }),
  ]);
}

/** A service that pages `all` as `form` carries them. */
function pagingService(all: unknown[], form: (page: unknown[]) => string) {
  return new MswDispatcher([
    http.get(`${API}/query`, ({ request }) => {
      const search = new URL(request.url).searchParams;
      const offset = Number(search.get('offset') ?? 0);
      const limit = Number(search.get('limit') ?? all.length);
      return new HttpResponse(form(all.slice(offset, offset + limit)), {
        headers: { 'content-type': 'application/json' },
      });
    }),
  ]);
}

const FORMS: Record<string, (page: unknown[]) => string> = {
  'a bare array': (page) => JSON.stringify(page),
  'an envelope holding the array': (page) => JSON.stringify({ statusCode: 200, headers: {}, body: page }),
  'an envelope holding the array as JSON text': (page) =>
    JSON.stringify({ statusCode: 200, headers: { 'X-Body': '"body":[' }, body: JSON.stringify(page) }),
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

/**
 * A service on a real socket paging `all` in the envelope, each page's length stated or (`chunked`) not; it keeps
 * the offsets asked. The later pages are shorter than the first, so a page read where the one before it was
 * would show that page's tail if the reading kept it.
 */
async function pagingServer(all: QueryRecord[]) {
  const state = { url: '', chunked: false, asked: [] as number[] };
  const server = createServer((request, response) => {
    const search = new URL(request.url ?? '/', 'http://x').searchParams;
    const offset = Number(search.get('offset') ?? 0);
    const limit = Number(search.get('limit') ?? all.length);
    state.asked.push(offset);
    const page = all.slice(offset, offset + limit).map((record, at) =>
      // Each page shorter than the one before: its records lose a field.
      offset > 0 && at % 2 === 0 ? { ...record, end_date: undefined } : record,
    );
    const text = JSON.stringify({ statusCode: 200, headers: {}, body: page });
    if (state.chunked) {
      response.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < text.length; at += 50_000) response.write(text.slice(at, at + 50_000));
      response.end();
    } else {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      response.end(text);
    }
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** Every part `queryFilePages` hands over, and the error that ended it, if any. */
async function parts(
  client: HttpClient,
  options: Parameters<HttpClient['queryFilePages']>[1] = {},
): Promise<{ parts: MissionFile[][]; error?: unknown }> {
  const taken: MissionFile[][] = [];
  try {
    for await (const part of client.queryFilePages(PARAMS, options)) taken.push(part);
  } catch (error) {
    return { parts: taken, error };
  }
  return { parts: taken };
}

describe('a large query page read a run of records at a time', () => {
  for (const [form, write] of Object.entries(FORMS)) {
    it(`gives every file once, in order, in parts smaller than the page: ${form}`, async () => {
      const all = manyRecords(4500);
      const client = new HttpClient({ url: API, dispatcher: pagingService(all, write), retryBaseMs: 1 });
      const got = await parts(client, { pageSize: 2000 });
      expect(got.error).toBeUndefined();
      expect(got.parts.flat().map((file) => file.path)).toEqual(all.map((record) => record.file_path));
      expect(got.parts.length).toBeGreaterThan(6);
      expect(Math.max(...got.parts.map((part) => part.length))).toBeLessThan(2000);
    });
  }

  it('refuses a record in the middle of a page, naming it, after the parts before it', async () => {
    const all: unknown[] = manyRecords(3000);
    all[2500] = { ...(all[2500] as QueryRecord), file_path: 'imap/mag/l1a/2025/01/../../../../etc/passwd' };
    const client = new HttpClient({
      url: API,
      dispatcher: serviceOf(() => JSON.stringify(all)),
      retryBaseMs: 1,
    });
    const got = await parts(client);
    expect(got.error).toBeInstanceOf(ProtocolError);
    expect(String((got.error as Error).message)).toMatch(/refusing record 2501: its file_path .* is unsafe/);
    expect(got.parts.flat().length).toBeGreaterThan(0);
    expect(got.parts.flat().length).toBeLessThanOrEqual(2500);
  });

  it('refuses text that is not JSON in the middle of a page, saying after which record', async () => {
    const text = JSON.stringify(manyRecords(3000)).replace('"descriptor":"d02000"', '"descriptor":d02000');
    const client = new HttpClient({ url: API, dispatcher: serviceOf(() => text), retryBaseMs: 1 });
    const got = await parts(client);
    expect(got.error).toBeInstanceOf(ProtocolError);
    const message = (got.error as Error).message;
    expect(message).toMatch(
      /^GET http:\/\/api\.test\/query\?.*: the answer is not valid JSON after record \d+: /,
    );
    const after = Number(/after record (\d+)/.exec(message)?.[1]);
    expect(after).toBeLessThanOrEqual(2000);
    expect(got.parts.flat().length).toBe(after);
  });

  it('refuses a large answer that is not JSON when the records are wanted all at once', async () => {
    const text = JSON.stringify(manyRecords(3000)).replace('"descriptor":"d02000"', '"descriptor":d02000');
    const client = new HttpClient({ url: API, dispatcher: serviceOf(() => text), retryBaseMs: 1 });
    const error = await client.query(PARAMS).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(
      /^GET http:\/\/api\.test\/query\?.*: the answer is not valid JSON: /,
    );
  });

  it('gives each file once when a service that ignores offset sends its one large page again', async () => {
    const all = manyRecords(3000);
    const dispatcher = serviceOf(() => JSON.stringify(all));
    const client = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    const got = await parts(client, { pageSize: 3000 });
    expect(got.error).toBeUndefined();
    expect(got.parts.flat().map((file) => file.path)).toEqual(all.map((record) => record.file_path));
    expect(dispatcher.requests).toHaveLength(2);
  });

  it('counts the newer naming forms of every part, once the last part is taken', async () => {
    const newer = (at: number) => ({
      file_path: `imap/mag/l1a/2025/01/imap_mag_l1a_d${at}_20250101_v0001.00001.cdf`,
      version: 'v0001.00001',
    });
    const all: unknown[] = [newer(1), ...manyRecords(3000), newer(2)];
    const client = new HttpClient({
      url: API,
      dispatcher: serviceOf(() => JSON.stringify(all)),
      retryBaseMs: 1,
    });
    const counts: number[] = [];
    const got = await parts(client, { onNewerForms: (count) => counts.push(count) });
    expect(got.error).toBeUndefined();
    expect(got.parts.flat()).toHaveLength(3000);
    expect(counts).toEqual([2]);
  });

  it('reads page after page over its own connections, stated or chunked, each page read whole before the next', async () => {
    const all = manyRecords(4500);
    const server = await pagingServer(all);
    for (const chunked of [false, true]) {
      server.chunked = chunked;
      const client = new HttpClient({ url: server.url, retryBaseMs: 1 });
      try {
        const got = await parts(client, { pageSize: 1500 });
        expect(got.error).toBeUndefined();
        expect(got.parts.flat().map((file) => file.path)).toEqual(all.map((record) => record.file_path));
        const whole = await client.query(PARAMS, { pageSize: 1500 });
        expect(whole.map((record) => record.file_path)).toEqual(all.map((record) => record.file_path));
      } finally {
        await client.close();
      }
    }
    expect(server.asked).toEqual([
      0, 1500, 3000, 4500, 0, 1500, 3000, 4500, 0, 1500, 3000, 4500, 0, 1500, 3000, 4500,
    ]);
  });

  it('says what a large array answered with a failure holds', async () => {
    const text = JSON.stringify({ statusCode: 403, body: manyRecords(1000) });
    const client = new HttpClient({ url: API, dispatcher: serviceOf(() => text), retryBaseMs: 1 });
    const got = await parts(client);
    expect(got.error).toBeInstanceOf(ApiError);
    expect((got.error as Error).message).toMatch(
      /403.*\[\{"file_path":"imap\/mag\/l1a\/2025\/01\/imap_mag_l1a_d00000/,
    );
  });
});
