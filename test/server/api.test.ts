/** The API routes (the specification's routes and error answers, server side) in every wire mode, with exact bodies. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectWire,
  outcomeOf,
  pathOf,
  putStoreFile,
  rawRequest,
  startTestServer,
  type TestServer,
  WIRE_MODE_LIST,
} from './helpers.js';

const NAME = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const KEY = `imap/mag/l1a/2025/01/${NAME}`;
const STORED = 'imap/swe/l0/2025/02/imap_swe_l0_raw_20250203_20250203_v01-00.pkts';
const STORED_BYTES = Buffer.from('stored swe packets');
const ANCILLARY_NAME = 'imap_mag_calibration_20250101_v01-00.json';
const ANCILLARY_STORED = 'imap/ancillary/swe/imap_swe_lookup-table_20250101_20250630_v01-00.csv';
const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };
const QUERY_HEADERS = { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' };
/**
 * The parameters the default dialect (`both`) accepts: the specification's, then today's filters, `latest` and
 * paging.
 */
const VALID =
  'file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, table, ingestion_start_date, ingestion_end_date, repointing, major_version, minor_version, latest, offset, limit';

/** The query's messages in the default dialect (`both`): the words of both generations. */
const QUERY_MESSAGES = {
  instrument:
    'Invalid instrument. Please choose from ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi, hi, ialirt, l1const, spacecraft, ultra',
  dataLevel:
    'Invalid data level. Please choose from l0, l1, l1a, l1b, l1c, l1ca, l1cb, l1d, l2, l2a, l2b, l2c, l3, l3a, l3b, l3c, l3d, l3e',
};

const MESSAGES = {
  filename: (name: string) =>
    `Invalid filename ${name}. Expected pattern: <mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>`,
  mission: 'Invalid mission. Please use imap.',
  instrument:
    'Invalid instrument. Please choose from ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi',
  dataLevel: 'Invalid data level. Please choose from l0, l1, l1a, l1b, l1c, l1d, l2',
  startDate: 'Invalid start date format. Please use YYYYMMDD format.',
  endDate: 'Invalid end date format. Please use YYYYMMDD format.',
  version: 'Invalid version format. Please use vxx-xx format.',
  extension:
    'Invalid extension. Extension should be pkts for data level l0 and cdf for data level higher than l0',
};

describe.each(WIRE_MODE_LIST)('wire mode %s', (mode) => {
  let test: TestServer;
  let base: string;
  const get = (path: string, headers?: Record<string, string>) =>
    rawRequest(base, path, headers ? { headers } : {});

  beforeAll(async () => {
    test = await startTestServer({ wire: mode }, async (store) => {
      await putStoreFile(store, STORED, STORED_BYTES);
      await putStoreFile(store, ANCILLARY_STORED, 'a,b\n1,2\n');
    });
    base = test.server.url;
  });
  afterAll(() => test.cleanup());

  describe('GET /upload/{filepath}', () => {
    it('200: the body is a pre-signed PUT URL of the key rebuilt from the name, valid one hour', async () => {
      const before = Math.floor(Date.now() / 1000);
      const result = await get(`/upload/${KEY}`);
      const { statusCode, body } = outcomeOf(result, mode);
      expect(statusCode).toBe(200);
      expectWire(result, mode, { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body });
      if (mode === 'gateway') expect(result.text).toBe(JSON.stringify(body));
      const url = new URL(body as string);
      expect(`${url.origin}${url.pathname}`).toBe(`${base}/objects/${KEY}`);
      expect(url.searchParams.get('X-Method')).toBe('PUT');
      const expires = Number(url.searchParams.get('X-Expires'));
      expect(expires).toBeGreaterThanOrEqual(before + 3600);
      expect(expires).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3600);
      expect(url.searchParams.get('X-Signature')).toMatch(/^[0-9a-f]{64}$/);
    });

    it('uses only the name: any folders in front are ignored', async () => {
      const result = await get(`/upload/data/somewhere/else/${NAME}`);
      const url = new URL(outcomeOf(result, mode).body as string);
      expect(url.pathname).toBe(`/objects/${KEY}`);
    });

    it.each([
      [
        'a name that does not split into the pattern',
        'imap_mag_l1a.cdf',
        [MESSAGES.filename('imap_mag_l1a.cdf')],
      ],
      ['a bad mission', 'imop_mag_l1a_x_20250101_20250101_v01-00.cdf', [MESSAGES.mission]],
      ['a bad instrument', 'imap_magnet_l1a_x_20250101_20250101_v01-00.cdf', [MESSAGES.instrument]],
      ['a bad data level', 'imap_mag_l9_x_20250101_20250101_v01-00.cdf', [MESSAGES.dataLevel]],
      ['a bad start date', 'imap_mag_l1a_x_20250230_20250101_v01-00.cdf', [MESSAGES.startDate]],
      ['a bad end date', 'imap_mag_l1a_x_20250101_2025011_v01-00.cdf', [MESSAGES.endDate]],
      ['a bad version', 'imap_mag_l1a_x_20250101_20250101_v1-00.cdf', [MESSAGES.version]],
      ['pkts above l0', 'imap_mag_l1a_x_20250101_20250101_v01-00.pkts', [MESSAGES.extension]],
      ['cdf at l0', 'imap_mag_l0_x_20250101_20250101_v01-00.cdf', [MESSAGES.extension]],
      [
        'every rule at once, one per line in order',
        'imop_magnet_l9_x_2025011_20251301_v1-0.txt',
        [
          MESSAGES.mission,
          MESSAGES.instrument,
          MESSAGES.dataLevel,
          MESSAGES.startDate,
          MESSAGES.endDate,
          MESSAGES.version,
          MESSAGES.extension,
        ],
      ],
    ])('400 for %s, listing every failing rule', async (_, name, problems) => {
      const result = await get(`/upload/imap/mag/l1a/2025/01/${name}`);
      expectWire(result, mode, { statusCode: 400, headers: TEXT, body: problems.join('\n') });
    });

    it('200 for an ancillary name: the key is imap/ancillary/<instrument>/<name>', async () => {
      const result = await get(`/upload/${ANCILLARY_NAME}`);
      const { statusCode, body } = outcomeOf(result, mode);
      expect(statusCode).toBe(200);
      expectWire(result, mode, { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body });
      expect(new URL(body as string).pathname).toBe(`/objects/imap/ancillary/mag/${ANCILLARY_NAME}`);
    });

    it.each([
      [
        'an ancillary extension not in the list',
        'imap_mag_calibration_20250101_v01-00.exe',
        [
          'Invalid extension. Ancillary files must have one of the extensions cdf, csv, dat, json, zip, tsv, pgm, xlsx',
        ],
      ],
      [
        'a bad ancillary name',
        'imap_mag__20250101_v01-00.csv',
        [
          'Invalid ancillary filename imap_mag__20250101_v01-00.csv. Expected pattern: <mission>_<instrument>_<descriptor>_<startdate>[_<enddate>]_<version>.<extension>',
        ],
      ],
      [
        'an ancillary name breaking several rules',
        'imop_magnet_calibration_20250230_v1.exe',
        [
          MESSAGES.mission,
          MESSAGES.instrument,
          MESSAGES.startDate,
          MESSAGES.version,
          'Invalid extension. Ancillary files must have one of the extensions cdf, csv, dat, json, zip, tsv, pgm, xlsx',
        ],
      ],
    ])('400 for %s', async (_, name, problems) => {
      expectWire(await get(`/upload/${name}`), mode, {
        statusCode: 400,
        headers: TEXT,
        body: problems.join('\n'),
      });
    });

    it('409 for an ancillary file stored already', async () => {
      expectWire(await get(`/upload/${ANCILLARY_STORED}`), mode, {
        statusCode: 409,
        headers: TEXT,
        body: `${base}/objects/${ANCILLARY_STORED} already exists.`,
      });
    });

    it('400 without a path', async () => {
      expectWire(await get('/upload/'), mode, {
        statusCode: 400,
        headers: TEXT,
        body: 'No file given to upload. Please provide the file path, e.g. /upload/imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
      });
    });

    it('409 when the file is stored already: "<object URL> already exists."', async () => {
      const result = await get(`/upload/${STORED}`);
      expectWire(result, mode, {
        statusCode: 409,
        headers: TEXT,
        body: `${base}/objects/${STORED} already exists.`,
      });
    });

    it('a PUT of the URL stores the file, then a second upload request is a 409', async () => {
      const name = `imap_mag_l1b_norm-mago_20250102_20250102_v01-00.cdf`;
      const key = `imap/mag/l1b/2025/01/${name}`;
      const url = outcomeOf(await get(`/upload/${name}`), mode).body as string;
      const put = await rawRequest(base, pathOf(url), { method: 'PUT', body: 'bytes' });
      expect(put.status).toBe(200);
      expectWire(await get(`/upload/${key}`), mode, {
        statusCode: 409,
        headers: TEXT,
        body: `${base}/objects/${key} already exists.`,
      });
    });
  });

  describe('GET /download/{filepath}', () => {
    it('302 with Content-Type text/html, Location and {download_url}; the URL serves the bytes', async () => {
      const result = await get(`/download/${STORED}`);
      const { statusCode, body } = outcomeOf(result, mode);
      expect(statusCode).toBe(302);
      const url = (body as { download_url: string }).download_url;
      expectWire(result, mode, {
        statusCode: 302,
        headers: { 'Content-Type': 'text/html', Location: url },
        body: { download_url: url },
      });
      // Envelope and gateway answers are real redirects (`curl -L` follows them); envelope-200 is not.
      expect(result.headers.location).toBe(mode === 'envelope-200' ? undefined : url);
      const parsed = new URL(url);
      expect(`${parsed.origin}${parsed.pathname}`).toBe(`${base}/objects/${STORED}`);
      expect(parsed.searchParams.get('X-Method')).toBe('GET');
      const expires = Number(parsed.searchParams.get('X-Expires'));
      expect(expires - Math.floor(Date.now() / 1000)).toBeGreaterThan(86_400 - 60);
      expect(expires - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(86_400);
      const object = await rawRequest(base, pathOf(url));
      expect(object.status).toBe(200);
      expect(object.body).toEqual(STORED_BYTES);
    });

    it('fetch follows the redirect to the bytes where the HTTP status is 302', async () => {
      const response = await fetch(`${base}/download/${STORED}`);
      if (mode === 'envelope-200') {
        expect(response.status).toBe(200);
        expect(((await response.json()) as { statusCode: number }).statusCode).toBe(302);
      } else {
        expect(response.status).toBe(200);
        expect(Buffer.from(await response.arrayBuffer())).toEqual(STORED_BYTES);
      }
    });

    it('302 for an ancillary file', async () => {
      const result = await get(`/download/${ANCILLARY_STORED}`);
      const url = (outcomeOf(result, mode).body as { download_url: string }).download_url;
      expectWire(result, mode, {
        statusCode: 302,
        headers: { 'Content-Type': 'text/html', Location: url },
        body: { download_url: url },
      });
      expect((await rawRequest(base, pathOf(url))).text).toBe('a,b\n1,2\n');
    });

    it.each(['/download', '/download/'])('400 with no path (%s)', async (path) => {
      expectWire(await get(path), mode, {
        statusCode: 400,
        headers: TEXT,
        body: 'No file requested for download. Please provide a filename in the path. Eg. /download/path/to/file/filename.pkts',
      });
    });

    it.each([
      `imap/mag/l1a/2025/01/${NAME}`,
      NAME,
      'imap/swe/l0/2025/03/imap_swe_l0_raw_20250203_20250203_v01-00.pkts',
      'not/a/file',
    ])('404 when missing (%s)', async (path) => {
      expectWire(await get(`/download/${path}`), mode, {
        statusCode: 404,
        headers: TEXT,
        body: 'File not found, make sure you include the full path to the file in the request, e.g. /download/path/to/file/filename.pkts.',
      });
    });
  });

  describe('GET /query', () => {
    it('200 with Content-Type application/json, Access-Control-Allow-Origin * and an array of records', async () => {
      const result = await get('/query?instrument=swe');
      expectWire(result, mode, {
        statusCode: 200,
        headers: QUERY_HEADERS,
        body: [
          {
            file_path: STORED,
            instrument: 'swe',
            data_level: 'l0',
            descriptor: 'raw',
            start_date: '20250203',
            end_date: '20250203',
            version: 'v01-00',
            extension: 'pkts',
            ingestion_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          },
        ],
      });
      expect(result.headers['access-control-allow-origin']).toBe('*');
    });

    it('200 [] when nothing matches', async () => {
      expectWire(await get('/query?instrument=idex'), mode, {
        statusCode: 200,
        headers: QUERY_HEADERS,
        body: [],
      });
    });

    it('400 for an unknown parameter, naming it and listing the valid ones', async () => {
      expectWire(await get('/query?instrument=mag&colour=blue'), mode, {
        statusCode: 400,
        headers: QUERY_HEADERS,
        body: `colour is not a valid query parameter. Valid query parameters are: ${VALID}`,
      });
    });

    it.each([
      ['start_date=2025-01-01', 'Invalid start_date "2025-01-01". Please use YYYYMMDD format.'],
      ['end_date=20250230', 'Invalid end_date "20250230". Please use YYYYMMDD format.'],
      ['ingestion_start_date=2025', 'Invalid ingestion_start_date "2025". Please use YYYYMMDD format.'],
      ['ingestion_end_date=20251301', 'Invalid ingestion_end_date "20251301". Please use YYYYMMDD format.'],
      ['instrument=magnet', QUERY_MESSAGES.instrument],
      ['data_level=l4', QUERY_MESSAGES.dataLevel],
      ['version=v1', 'Invalid version "v1". Please use vNNN.NNNN, vNNN or vxx-xx format, or latest.'],
      ['extension=txt', 'Invalid extension "txt". Please choose from pkts, cdf'],
      [
        'table=ancillary&extension=exe',
        'Invalid extension "exe". Please choose from cdf, csv, dat, json, zip, tsv, pgm, xlsx',
      ],
      [
        'table=calibration',
        'Invalid table "calibration". Please choose from science, ancillary (SPICE kernels: GET /spice-query)',
      ],
      [
        'table=quicklook',
        'Invalid table "quicklook". Please choose from science, ancillary (SPICE kernels: GET /spice-query)',
      ],
      [
        'table=spice',
        'The spice table is not searched at /query: ask GET /spice-query (e.g. /spice-query?type=leapseconds) for SPICE kernels.',
      ],
      [
        'table=ancillary&repointing=1',
        'The repointing filter does not apply to the ancillary table (it applies to science).',
      ],
      [
        'repointing=-1',
        'Invalid repointing "-1". Please use a whole number of up to 5 digits (e.g. 42 or repoint00042).',
      ],
      ['major_version=v1', 'Invalid major_version "v1". Please use a whole number of up to 3 digits.'],
      ['minor_version=12345', 'Invalid minor_version "12345". Please use a whole number of up to 4 digits.'],
      ['type=leapseconds', `type is not a valid query parameter. Valid query parameters are: ${VALID}`],
      ['descriptor=a_b', 'Invalid descriptor "a_b". A descriptor is letters, digits and dashes.'],
      ['file_path=../x', `Invalid file_path "../x": it contains a '..' segment.`],
      [
        'instrument=mag&instrument=swe',
        'The query parameter instrument is given more than once; give it once.',
      ],
      [
        '',
        `Give at least one query parameter, e.g. /query?instrument=mag. Valid query parameters are: ${VALID}`,
      ],
    ])('400 for a bad value: %s', async (search, message) => {
      expectWire(await get(`/query${search ? `?${search}` : ''}`), mode, {
        statusCode: 400,
        headers: QUERY_HEADERS,
        body: message,
      });
    });
  });

  describe('other paths and methods', () => {
    it.each(['/', '/uploads/x', '/query/', '/queryx', '/download-all', '/spice-query/x', '/spice-queryx'])(
      '404 for %s',
      async (path) => {
        expectWire(await get(path), mode, {
          statusCode: 404,
          headers: TEXT,
          body: `Not found: there is no route ${path}. Routes are GET /upload/{filepath}, GET or HEAD /download/{filepath}, GET /query and GET /spice-query, each also under /api-key/ and /authorized/.`,
        });
      },
    );

    it.each([
      ['POST', '/query', 'GET'],
      ['PUT', `/upload/${KEY}`, 'GET'],
      ['DELETE', `/download/${STORED}`, 'GET, HEAD'],
      ['POST', `/download/${STORED}`, 'GET, HEAD'],
      ['HEAD', '/query', 'GET'],
    ])('405 for %s %s, with Allow: %s', async (method, path, allow) => {
      const result = await rawRequest(base, path, { method });
      if (method === 'HEAD') {
        expect(result.status).toBe(mode === 'envelope-200' ? 200 : 405);
        expect(result.body.length).toBe(0);
        return;
      }
      expectWire(result, mode, {
        statusCode: 405,
        headers: { ...TEXT, Allow: allow },
        body: `Method ${method} is not allowed on ${path}; use ${allow.replace(', ', ' or ')}.`,
      });
      if (mode !== 'envelope-200') expect(result.headers.allow).toBe(allow);
    });
  });

  describe('object routes answer like an object store, whatever the wire mode', () => {
    it('a plain 403 for a URL without a signature', async () => {
      const result = await get(`/objects/${STORED}`);
      expect(result.status).toBe(403);
      expect(result.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(result.text).toBe(
        'Missing signature: this URL needs X-Method, X-Expires and X-Signature; get one from /upload or /download.\n',
      );
    });

    it('a plain 206 with the raw bytes for a Range', async () => {
      const url = (outcomeOf(await get(`/download/${STORED}`), mode).body as { download_url: string })
        .download_url;
      const result = await rawRequest(base, pathOf(url), { headers: { Range: 'bytes=7-9' } });
      expect(result.status).toBe(206);
      expect(result.headers['content-type']).toBe('application/octet-stream');
      expect(result.body).toEqual(STORED_BYTES.subarray(7, 10));
    });
  });

  describe('API keys (uploads only)', () => {
    let keyed: TestServer;
    beforeAll(async () => {
      keyed = await startTestServer({ wire: mode, apiKeys: ['first-key', 'second-key'] }, (store) =>
        putStoreFile(store, STORED, STORED_BYTES),
      );
    });
    afterAll(() => keyed.cleanup());

    it('401 without X-api-key', async () => {
      expectWire(await rawRequest(keyed.server.url, `/upload/${KEY}`), mode, {
        statusCode: 401,
        headers: TEXT,
        body: 'Missing X-api-key header: this server needs an API key for uploads.',
      });
    });

    it.each(['wrong', 'first-ke', 'FIRST-KEY', 'first-keyy'])('403 with a wrong key (%j)', async (key) => {
      expectWire(
        await rawRequest(keyed.server.url, `/upload/${KEY}`, { headers: { 'X-api-key': key } }),
        mode,
        {
          statusCode: 403,
          headers: TEXT,
          body: 'Forbidden: the X-api-key given is not valid for this server.',
        },
      );
    });

    it.each(['first-key', 'second-key'])('200 with an accepted key (%s)', async (key) => {
      const result = await rawRequest(keyed.server.url, `/upload/${KEY}`, { headers: { 'X-api-key': key } });
      expect(outcomeOf(result, mode).statusCode).toBe(200);
    });

    it('download and query need no key', async () => {
      expect(outcomeOf(await rawRequest(keyed.server.url, `/download/${STORED}`), mode).statusCode).toBe(302);
      expect(outcomeOf(await rawRequest(keyed.server.url, '/query?instrument=swe'), mode).statusCode).toBe(
        200,
      );
    });
  });
});
