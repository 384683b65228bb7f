/**
 * `client.queryPages()`: the records of `query`, a page at a time, each page asked only when the caller takes the
 * one before; leaving the loop asks for no more; a failure rejects the iteration after the pages handed over; the
 * newest ancillary versions, chosen from every version, come as one page at the end.
 */

import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  type MissionDataClient,
  type ReceivedRecord,
  ValidationError,
} from '../../src/index.js';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { makeTempDir } from '../server/helpers.js';

/** A science record of mag for day `day` of January 2025. */
function science(day: number): QueryRecord {
  const date = `202501${String(day).padStart(2, '0')}`;
  return {
    file_path: `imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_${date}_${date}_v01-00.cdf`,
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: date,
    end_date: date,
    version: 'v01-00',
    extension: 'cdf',
  };
}

/** An ancillary record of mag's calibration from `date`, in `version`. */
function calibration(date: string, version: string): QueryRecord {
  return {
    file_path: `imap/ancillary/mag/imap_mag_calibration_${date}_${version}.json`,
    instrument: 'mag',
    descriptor: 'calibration',
    start_date: date,
    end_date: null,
    version,
    extension: 'json',
  };
}

const SCIENCE = [1, 2, 3, 4, 5].map(science);

let home: string;
let server: Server;
let client: MissionDataClient;
/** The records the service holds, and the offset of each page asked for. */
let served: QueryRecord[];
let asked: number[];
let failAt: number | undefined;

beforeAll(async () => {
  home = await makeTempDir('mission-query-pages-');
  server = createServer((request, response) => {
    const address = new URL(request.url ?? '/', 'http://localhost');
    const offset = Number(address.searchParams.get('offset') ?? 0);
    const limit = Number(address.searchParams.get('limit') ?? served.length);
    asked.push(offset);
    const failed = offset === failAt;
    response.writeHead(failed ? 500 : 200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify(failed ? { message: 'the index is down' } : served.slice(offset, offset + limit)),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  client = createClient({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    env: {},
    configFile: join(home, 'missing-config.json'),
    retries: 0,
  });
});

beforeEach(() => {
  served = SCIENCE;
  asked = [];
  failAt = undefined;
});

afterAll(async () => {
  await client.close();
  await new Promise((done) => server.close(done));
  await rm(home, { recursive: true, force: true });
});

describe('client.queryPages', () => {
  it('hands over each page as it comes, asking for the next only when the caller takes it', async () => {
    const pages = client.queryPages({ instrument: 'mag' }, { pageSize: 2 })[Symbol.asyncIterator]();
    expect(asked).toEqual([]);
    expect((await pages.next()).value).toEqual(SCIENCE.slice(0, 2));
    expect(asked).toEqual([0]);
    expect((await pages.next()).value).toEqual(SCIENCE.slice(2, 4));
    expect(asked).toEqual([0, 2]);
    expect((await pages.next()).value).toEqual(SCIENCE.slice(4));
    expect(asked).toEqual([0, 2, 4]);
    expect((await pages.next()).done).toBe(true);
  });

  it('gives, page after page, the records query gives at once', async () => {
    const pages: ReceivedRecord[][] = [];
    for await (const page of client.queryPages({ instrument: 'mag' }, { pageSize: 2 })) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(await client.query({ instrument: 'mag' }, { pageSize: 2 }));
  });

  it('asks for no more pages once the caller leaves the loop', async () => {
    for await (const page of client.queryPages({ instrument: 'mag' }, { pageSize: 2 })) {
      expect(page).toEqual(SCIENCE.slice(0, 2));
      break;
    }
    expect(asked).toEqual([0]);
  });

  it('yields no page when nothing matches', async () => {
    served = [];
    const pages: unknown[] = [];
    for await (const page of client.queryPages({ instrument: 'mag' })) pages.push(page);
    expect(pages).toEqual([]);
    expect(asked).toEqual([0]);
  });

  it('rejects the iteration with the failure after the pages handed over', async () => {
    failAt = 2;
    const taken: ReceivedRecord[][] = [];
    const failure = await (async () => {
      for await (const page of client.queryPages({ instrument: 'mag' }, { pageSize: 2 })) taken.push(page);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(taken).toEqual([SCIENCE.slice(0, 2)]);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 500 });
  });

  it('checks the filters when the iteration starts, before any request', async () => {
    const pages = client.queryPages({}, { pageSize: 2 })[Symbol.asyncIterator]();
    await expect(pages.next()).rejects.toBeInstanceOf(ValidationError);
    await expect(
      client.queryPages({ instrument: 'mag' }, { pageSize: 0 })[Symbol.asyncIterator]().next(),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(asked).toEqual([]);
  });

  it("hands over ancillary files' newest versions as one page, chosen from every page", async () => {
    served = [
      calibration('20250101', 'v02-01'),
      calibration('20250102', 'v01-00'),
      calibration('20250101', 'v02-02'),
      calibration('20250103', 'v01-00'),
    ];
    const pages: ReceivedRecord[][] = [];
    const filters = { instrument: 'mag', table: 'ancillary', version: 'latest' } as const;
    for await (const page of client.queryPages(filters, { pageSize: 2 })) pages.push(page);
    expect(asked).toEqual([0, 2, 4]);
    expect(pages).toEqual([[served[1], served[2], served[3]]]);
  });
});
