/**
 * The query of today's archive through the library: today's filters as the service takes them (`repointing` as a
 * number, both versions' parts), values of either generation's vocabulary, the SPICE table at `/spice-query` with
 * its own parameter names, its records checked (and their storage path rebuilt from the name when left out), and
 * `latest` resolved by the client for the ancillary table.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import type { MissionDataClient } from '../../src/api-types.js';
import { ApiError, ProtocolError, ValidationError } from '../../src/core/errors.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';
import { makeTempDir } from '../server/helpers.js';

let home: string;
beforeAll(async () => {
  home = await makeTempDir('mission-query-today-');
});
afterAll(() => rm(home, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to fail');
}

/** A service answering `/query` and `/spice-query` (under any prefix) with fixed records, requests kept. */
function service(records: { query?: unknown[]; spice?: unknown[]; spiceStatus?: number } = {}) {
  const answer = (list: unknown[] | undefined) => () => HttpResponse.json(list ?? []);
  return new MswDispatcher([
    http.get('http://api.test/query', answer(records.query)),
    http.get('http://api.test/api-key/query', answer(records.query)),
    http.get('http://api.test/spice-query', () =>
      records.spiceStatus
        ? HttpResponse.json({ message: 'Not Found' }, { status: records.spiceStatus })
        : HttpResponse.json(records.spice ?? []),
    ),
    http.get('http://api.test/api-key/spice-query', answer(records.spice)),
  ]);
}

function clientOf(dispatcher: MswDispatcher, apiKey?: string): MissionDataClient {
  return createClient({
    url: 'http://api.test',
    dispatcher,
    env: {},
    configFile: join(home, 'none.json'),
    retries: 0,
    ...(apiKey ? { apiKey } : {}),
  });
}

/** The path and query string of each request the service saw. */
const asked = (dispatcher: MswDispatcher) =>
  dispatcher.requests.map((request) => {
    const url = new URL(request.url);
    return `${url.pathname}${url.search}`;
  });

const LEAPSECONDS = {
  file_name: 'naif0012.tls',
  kernel_type: 'leapseconds',
  min_date_datetime: null,
  max_date_datetime: null,
  ingestion_date: '2025-01-02 03:04:05',
  version: '0012',
};
const PREDICTED = {
  file_path: 'imap/spice/spk/imap_pred_od004_20251002_20251113_v01.bsp',
  file_name: 'imap_pred_od004_20251002_20251113_v01.bsp',
  kernel_type: 'ephemeris_predicted',
  min_date_datetime: '2025-10-02T00:00:00',
  max_date_datetime: '2025-11-13T23:59:59',
  version: 1,
};

describe("today's filters at /query", () => {
  it('sends the repointing as a whole number, both parts of a version, and the words of today', async () => {
    const dispatcher = service();
    const client = clientOf(dispatcher);
    for (const repointing of ['42', '00042', 'repoint00042']) {
      await client.query({ instrument: 'hi', dataLevel: 'l3a', repointing });
    }
    await client.query({ instrument: 'mag', majorVersion: '1', minorVersion: '0002', version: 'v001.0002' });
    await client.query({ instrument: 'ultra', version: 'v003' });
    await client.query({ instrument: 'hi-45', version: 'v01-00' });
    expect(asked(dispatcher)).toEqual([
      '/query?instrument=hi&data_level=l3a&repointing=42&offset=0&limit=10000',
      '/query?instrument=hi&data_level=l3a&repointing=42&offset=0&limit=10000',
      '/query?instrument=hi&data_level=l3a&repointing=42&offset=0&limit=10000',
      '/query?instrument=mag&version=v001.0002&major_version=1&minor_version=0002&offset=0&limit=10000',
      '/query?instrument=ultra&version=v003&offset=0&limit=10000',
      '/query?instrument=hi-45&version=v01-00&offset=0&limit=10000',
    ]);
    await client.close();
  });

  it('refuses bad values and filters of another table before any request', async () => {
    const dispatcher = service();
    const client = clientOf(dispatcher);
    const cases: [Parameters<MissionDataClient['query']>[0], RegExp][] = [
      [{ instrument: 'hi', repointing: 'repoint0004x' }, /Invalid repointing "repoint0004x"/],
      [{ instrument: 'hi', majorVersion: 'one' }, /Invalid major_version "one"/],
      [{ instrument: 'hi', version: 'v1.2' }, /Invalid version "v1.2". Please use vNNN.NNNN, vNNN or vxx-xx/],
      [
        { instrument: 'hi', kernelType: 'leapseconds' },
        /The type filter does not apply to the science table/,
      ],
      [{ table: 'spice', instrument: 'mag' }, /The instrument filter does not apply to the spice table/],
      [{ table: 'ancillary', instrument: 'mag', repointing: '1' }, /The repointing filter does not apply/],
      [
        { table: 'spice', kernelType: 'leapsecond' },
        /Invalid type "leapsecond".*Did you mean leapseconds\?/s,
      ],
    ];
    for (const [filters, message] of cases) {
      const error = await failure(client.query(filters));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).exitCode).toBe(2);
      expect(error.message).toMatch(message);
    }
    expect(dispatcher.requests).toEqual([]);
    await client.close();
  });
});

describe('the SPICE table at /spice-query', () => {
  it('is asked with its own parameter names, no table, and latest=true for the newest version', async () => {
    const dispatcher = service({ spice: [LEAPSECONDS] });
    const client = clientOf(dispatcher);
    await client.query({
      table: 'spice',
      kernelType: 'leapseconds',
      startDate: '20250101',
      endDate: '20250201',
      ingestionStartDate: '20250102',
      ingestionEndDate: '20250103',
      version: 'latest',
    });
    await client.query({ table: 'spice', kernelType: 'ephemeris_predicted', version: '01' });
    expect(asked(dispatcher)).toEqual([
      '/spice-query?start_date=20250101&end_date=20250201&start_ingest_date=20250102&end_ingest_date=20250103&type=leapseconds&latest=true&offset=0&limit=10000',
      '/spice-query?version=01&type=ephemeris_predicted&offset=0&limit=10000',
    ]);
    await client.close();
  });

  it('goes under /api-key/ with the key, as /query does', async () => {
    const dispatcher = service({ spice: [LEAPSECONDS] });
    const client = clientOf(dispatcher, 'secret');
    await client.query({ table: 'spice', kernelType: 'leapseconds' });
    expect(asked(dispatcher)).toEqual(['/api-key/spice-query?type=leapseconds&offset=0&limit=10000']);
    expect(dispatcher.requests[0]?.headers.get('x-api-key')).toBe('secret');
    await client.close();
  });

  it('hands out each record with its storage path, rebuilt from the name when the service leaves it out', async () => {
    const client = clientOf(service({ spice: [LEAPSECONDS, PREDICTED] }));
    const counts: number[] = [];
    const records = await client.query(
      { table: 'spice', kernelType: 'leapseconds' },
      { onNewerForms: (count) => counts.push(count) },
    );
    expect(records).toEqual([{ ...LEAPSECONDS, file_path: 'imap/spice/lsk/naif0012.tls' }, PREDICTED]);
    expect(counts).toEqual([]);
    await client.close();
  });

  it('keeps a kernel of a newer name form when its record gives a safe file_path, counted as newer', async () => {
    const newer = { ...LEAPSECONDS, file_name: 'naif0013.tlz', file_path: 'imap/spice/lsk/naif0013.tlz' };
    const client = clientOf(service({ spice: [newer] }));
    const counts: number[] = [];
    const records = await client.query(
      { table: 'spice', kernelType: 'leapseconds' },
      { onNewerForms: (count) => counts.push(count) },
    );
    expect(records).toEqual([newer]);
    expect(counts).toEqual([1]);
    await client.close();
  });

  it.each([
    ['a body that is no list', { records: 'none' }, /expected a JSON array of file records/],
    [
      'a missing kernel type',
      [{ ...LEAPSECONDS, kernel_type: undefined }],
      /record 1 is not a file record \(field kernel_type: /,
    ],
    [
      'a coverage date that is a number',
      [{ ...LEAPSECONDS, min_date_datetime: 20250101 }],
      /field min_date_datetime: /,
    ],
    [
      'a coverage date left out',
      [{ ...LEAPSECONDS, max_date_datetime: undefined }],
      /field max_date_datetime: /,
    ],
    ['a version that is no text or number', [{ ...LEAPSECONDS, version: null }], /field version: /],
    [
      'a name no kind reads, and no path',
      [{ ...LEAPSECONDS, file_name: 'notes.txt' }],
      /its file_name "notes.txt" is not a file name this version reads/,
    ],
    [
      'a science name',
      [{ ...LEAPSECONDS, file_name: 'imap_mag_l1a_burst_20250101_v001.0001.cdf' }],
      /is a science file, not a SPICE kernel/,
    ],
    [
      'a path in the wrong folder',
      [{ ...LEAPSECONDS, file_path: 'imap/spice/spk/naif0012.tls' }],
      /is not a valid storage path .*the kernel folder is "spk"/,
    ],
    [
      'a path of another name',
      [{ ...PREDICTED, file_path: 'imap/spice/lsk/naif0012.tls' }],
      /does not end in its file_name/,
    ],
    [
      'a name with folders',
      [{ ...LEAPSECONDS, file_name: 'lsk/naif0012.tls' }],
      /its file_name "lsk\/naif0012.tls" is not a bare file name/,
    ],
    ['an unsafe path', [{ ...LEAPSECONDS, file_path: 'imap/../naif0012.tls' }], /its file_path .* is unsafe/],
  ])('refuses %s with a ProtocolError', async (_what, body, message) => {
    const dispatcher = new MswDispatcher([
      http.get('http://api.test/spice-query', () => HttpResponse.json(body)),
    ]);
    const client = clientOf(dispatcher);
    const error = await failure(client.query({ table: 'spice', kernelType: 'leapseconds' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/^GET http:\/\/api\.test\/spice-query\?/);
    expect(error.message).toMatch(message);
    await client.close();
  });

  it('says a service without /spice-query keeps no SPICE table', async () => {
    const client = clientOf(service({ spiceStatus: 404 }));
    const error = await failure(client.query({ table: 'spice', kernelType: 'leapseconds' }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toMatch(/the service has no \/spice-query route: it keeps no SPICE table/);
    await client.close();
  });
});

describe('the newest ancillary versions, chosen by the client', () => {
  const ancillary = (descriptor: string, start: string, version: string, end?: string) => ({
    file_path: `imap/ancillary/mag/imap_mag_${descriptor}_${start}${end ? `_${end}` : ''}_${version}.cdf`,
    instrument: 'mag',
    descriptor,
    start_date: start,
    end_date: end ?? null,
    version,
    extension: 'cdf',
  });
  const OLD_SPEC = ancillary('cal', '20250101', 'v01-00');
  const V001 = ancillary('cal', '20250101', 'v001', '20250131');
  const V003 = ancillary('cal', '20250101', 'v003');
  const V002 = ancillary('cal', '20250101', 'v002');
  const OTHER_DAY = ancillary('cal', '20250201', 'v001');
  const OTHER_DESCRIPTOR = ancillary('offsets', '20250101', 'v001');

  it('asks for every version and keeps the greatest of each instrument, descriptor and start date', async () => {
    const dispatcher = service({ query: [OLD_SPEC, V001, V003, OTHER_DAY, V002, OTHER_DESCRIPTOR] });
    const client = clientOf(dispatcher);
    const records = await client.query({ table: 'ancillary', instrument: 'mag', version: 'latest' });
    expect(records).toEqual([V003, OTHER_DAY, OTHER_DESCRIPTOR]);
    expect(asked(dispatcher)).toEqual(['/query?table=ancillary&instrument=mag&offset=0&limit=10000']);
    await client.close();
  });

  it('keeps every version when latest is not asked for', async () => {
    const client = clientOf(service({ query: [OLD_SPEC, V001, V003] }));
    expect(await client.query({ table: 'ancillary', instrument: 'mag' })).toEqual([OLD_SPEC, V001, V003]);
    await client.close();
  });

  it('leaves latest of the science table to the service', async () => {
    const dispatcher = service();
    const client = clientOf(dispatcher);
    await client.query({ instrument: 'mag', version: 'latest' });
    expect(asked(dispatcher)).toEqual(['/query?instrument=mag&version=latest&offset=0&limit=10000']);
    await client.close();
  });
});
