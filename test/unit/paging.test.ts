/**
 * Services that cap their answers without saying so: the client asks for the next page whenever a page holds
 * exactly a common cap's count or the service states a larger total, so it never returns a silent subset; a
 * service that cannot page and answers with a capped-looking count is reported as possibly cut.
 */
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { HttpClient } from '../../src/service/client.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { manyRecords } from '../helpers/records.js';

const API = 'http://api.test';

/** A service holding `all` that pages but never answers more than `cap` records, whatever `limit` asks. */
function cappedService(
  all: QueryRecord[],
  cap: number,
  headers: (total: number) => Record<string, string> = () => ({}),
) {
  return new MswDispatcher([
    http.get(`${API}/query`, ({ request }) => {
      const search = new URL(request.url).searchParams;
      const offset = Number(search.get('offset') ?? 0);
      const limit = Math.min(Number(search.get('limit') ?? all.length), cap);
      return HttpResponse.json(all.slice(offset, offset + limit), { headers: headers(all.length) });
    }),
  ]);
}

/** A service that refuses offset and limit and answers at most `cap` records. */
function unpagedService(all: QueryRecord[], cap: number) {
  return new MswDispatcher([
    http.get(`${API}/query`, ({ request }) => {
      const search = new URL(request.url).searchParams;
      if (search.has('offset') || search.has('limit')) {
        return HttpResponse.json(
          { statusCode: 400, body: 'offset is not a valid query parameter.' },
          { status: 400 },
        );
      }
      return HttpResponse.json(all.slice(0, cap));
    }),
  ]);
}

describe('a service that caps its pages at 1,000 without saying so', () => {
  it('returns all 2,500 matches, not the first 1,000', async () => {
    const all = manyRecords(2500);
    const dispatcher = cappedService(all, 1000);
    const client = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    const cut: number[] = [];
    const got = await client.query({ instrument: 'mag' }, { onPossiblyCut: (n) => cut.push(n) });
    expect(got.map((r) => r.file_path)).toEqual(all.map((r) => r.file_path));
    expect(dispatcher.requests.map((r) => new URL(r.url).searchParams.get('offset'))).toEqual([
      '0',
      '1000',
      '2000',
    ]);
    expect(cut).toEqual([]);
  });

  it('asks once more after exactly 1,000 matches, and an empty page ends the query', async () => {
    const all = manyRecords(1000);
    const dispatcher = cappedService(all, 1000);
    const client = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    expect(await client.query({ instrument: 'mag' })).toHaveLength(1000);
    expect(dispatcher.requests).toHaveLength(2);
  });

  it('follows a stated X-Total-Count past a cap that is not a common one', async () => {
    const all = manyRecords(1500);
    const dispatcher = cappedService(all, 700, (total) => ({ 'X-Total-Count': String(total) }));
    const client = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    expect(await client.query({ instrument: 'mag' })).toHaveLength(1500);
    expect(dispatcher.requests).toHaveLength(3);
  });

  it('asks for no extra page when a short page is not a common cap', async () => {
    const dispatcher = cappedService(manyRecords(37), 1000);
    const client = new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
    expect(await client.query({ instrument: 'mag' })).toHaveLength(37);
    expect(dispatcher.requests).toHaveLength(1);
  });
});

describe('a service that cannot page', () => {
  it('says the result may be cut when it answers with a capped-looking count', async () => {
    const client = new HttpClient({
      url: API,
      dispatcher: unpagedService(manyRecords(2500), 1000),
      retryBaseMs: 1,
    });
    const cut: number[] = [];
    const got = await client.query({ instrument: 'mag' }, { onPossiblyCut: (n) => cut.push(n) });
    expect(got).toHaveLength(1000);
    expect(cut).toEqual([1000]);
  });

  it('says nothing when the count is not one services cap at', async () => {
    const client = new HttpClient({
      url: API,
      dispatcher: unpagedService(manyRecords(999), 1000),
      retryBaseMs: 1,
    });
    const cut: number[] = [];
    expect(await client.query({ instrument: 'mag' }, { onPossiblyCut: (n) => cut.push(n) })).toHaveLength(
      999,
    );
    expect(cut).toEqual([]);
  });
});
