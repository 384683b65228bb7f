import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { DEFAULT_URL } from '../../src/core/config.js';
import { AbortedError, ApiError, ValidationError } from '../../src/core/errors.js';
import type {
  DownloadProgress,
  DownloadResult,
  MissionDataClient,
  QueryOptions,
  ReceivedRecord,
  UploadProgress,
} from '../../src/index.js';
import * as library from '../../src/index.js';
import type { QueryRecord } from '../../src/naming/query-records.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';

const API = 'http://api.test';
const NAME = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const PATH = `imap/mag/l1a/2025/01/${NAME}`;
const RECORD: QueryRecord = {
  file_path: PATH,
  instrument: 'mag',
  data_level: 'l1a',
  descriptor: 'norm-mago',
  start_date: '20250101',
  end_date: '20250101',
  version: 'v01-00',
  extension: 'cdf',
};

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-api-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A client with an empty environment and no configuration file, talking to msw handlers. */
function clientWith(dispatcher: MswDispatcher, options: Parameters<typeof createClient>[0] = {}) {
  return createClient({
    url: API,
    dataDir: join(home, 'data'),
    env: {},
    configFile: join(home, 'missing-config.json'),
    dispatcher,
    retryBaseMs: 1,
    ...options,
  });
}

describe('createClient', () => {
  it('is exported by the library', () => {
    expect(typeof library.createClient).toBe('function');
  });

  it('query maps camelCase filters to the service parameters', async () => {
    const dispatcher = new MswDispatcher([http.get(`${API}/query`, () => HttpResponse.json([RECORD]))]);
    const client = clientWith(dispatcher);
    const records = await client.query({
      instrument: 'mag',
      dataLevel: 'l1a',
      startDate: '20250101',
      ingestionEndDate: '20250301',
      version: 'latest',
      filePath: PATH,
    });
    expect(records).toEqual([RECORD]);
    const url = new URL(dispatcher.requests[0]?.url ?? '');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      instrument: 'mag',
      data_level: 'l1a',
      start_date: '20250101',
      ingestion_end_date: '20250301',
      version: 'latest',
      file_path: PATH,
      offset: '0',
      limit: '10000',
    });
    await client.close();
  });

  it('query refuses bad values, unknown filters and no filter at all, before any request', async () => {
    const dispatcher = new MswDispatcher([]);
    const client = clientWith(dispatcher);
    const bad = await client
      .query({ startDate: '2025-01-01', dataLevel: 'l9' })
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).problems).toEqual([
      expect.stringMatching(/^Invalid data level/),
      'Invalid start_date "2025-01-01". Please use YYYYMMDD format.',
    ]);
    await expect(client.query({ instrumnet: 'mag' } as never)).rejects.toThrow(
      /Unknown query filter "instrumnet"/,
    );
    await expect(client.query({})).rejects.toThrow(/Give at least one query filter: instrument, dataLevel/);
    await expect(client.query({ instrument: 'mag', instrumnet: 'mag' } as never)).rejects.toThrow(
      /Unknown query filter "instrumnet"/,
    );
    await expect(client.query({ table: 'ancillary' })).rejects.toThrow(/Give at least one query filter/);
    expect(dispatcher.requests).toEqual([]);
  });

  it('settings resolve as option > environment > configuration file > default', async () => {
    const configFile = join(home, 'config.json');
    await writeFile(
      configFile,
      JSON.stringify({ url: 'http://from-file.test', dataDir: join(home, 'file-data') }),
    );
    const fromFile = createClient({ configFile, env: {} });
    expect(await fromFile.config()).toMatchObject({
      url: 'http://from-file.test',
      dataDir: join(home, 'file-data'),
    });
    const fromEnv = createClient({
      configFile,
      env: { IMAP_DATA_ACCESS_URL: 'http://imap-env.test', MISSION_DATA_ACCESS_URL: 'http://env.test' },
    });
    expect((await fromEnv.config()).url).toBe('http://env.test');
    const fromOption = createClient({
      configFile,
      env: { MISSION_DATA_ACCESS_URL: 'http://env.test' },
      url: API,
    });
    expect((await fromOption.config()).url).toBe(API);
    const fallback = createClient({ configFile: join(home, 'none.json'), env: {} });
    expect((await fallback.config()).url).toBe(DEFAULT_URL);
  });

  it('takes the transfer settings as options (part size in MiB, as the file) over the environment', async () => {
    const configFile = join(home, 'config.json');
    await writeFile(configFile, JSON.stringify({ partSize: '8' }));
    const env = { MISSION_DATA_CONCURRENCY: '3', MISSION_DATA_REQUIRE_CHECKSUM: 'true' };
    const fromSettings = await createClient({ configFile, env }).config();
    expect(fromSettings).toMatchObject({
      concurrency: 3,
      partSize: 8,
      requireChecksum: true,
      connections: 'auto',
    });
    const fromOptions = await createClient({
      configFile,
      env,
      concurrency: 5,
      partSize: '32',
      connections: 2,
      requireChecksum: false,
    }).config();
    expect(fromOptions).toMatchObject({
      concurrency: 5,
      partSize: 32,
      connections: 2,
      requireChecksum: false,
    });
    expect(fromOptions.sources).toMatchObject({
      concurrency: 'flag',
      partSize: 'flag',
      requireChecksum: 'flag',
    });
    await expect(createClient({ configFile, env, connections: 0 }).config()).rejects.toThrow(
      'Invalid connections "0", set by the --connections flag: must be a whole number from 1 to 64, or auto (measured).',
    );
  });

  it("hands its transfer settings to every transfer call, a call's own options winning", async () => {
    const objectUrl = 'http://store.test/objects/one?sig=1';
    const dispatcher = new MswDispatcher([
      http.get(`${API}/query`, () => HttpResponse.json([RECORD])),
      http.get(`${API}/download/*`, () =>
        HttpResponse.json({ statusCode: 302, body: { download_url: objectUrl } }),
      ),
      // No ETag and no x-amz-checksum-*: a file the store states no checksum for.
      http.get('http://store.test/objects/*', () => new HttpResponse('file bytes')),
    ]);
    const client = clientWith(dispatcher, { env: { MISSION_DATA_REQUIRE_CHECKSUM: 'true' } });
    const unverified = { status: 'failed', error: { code: 'E_UNVERIFIED' } };
    expect(await client.download(PATH)).toMatchObject([unverified]);
    expect((await client.downloadMatching({ instrument: 'mag' })).results).toMatchObject([unverified]);
    expect((await client.sync({ instrument: 'mag' })).files).toMatchObject([unverified]);
    const [taken] = await client.download(PATH, { requireChecksum: false });
    expect(taken).toMatchObject({ status: 'downloaded', verified: false });
  });

  it('download takes names, storage paths and query records, into the data root', async () => {
    const objectUrl = 'http://store.test/objects/one?sig=1';
    const dispatcher = new MswDispatcher([
      http.get(`${API}/download/*`, () =>
        HttpResponse.json({
          statusCode: 302,
          headers: { Location: objectUrl },
          body: { download_url: objectUrl },
        }),
      ),
      http.get(
        'http://store.test/objects/*',
        // An S3-style ETag (the MD5 of the bytes), which the download is verified against.
        () =>
          new HttpResponse('file bytes', {
            headers: {
              'Content-Length': '10',
              ETag: `"${createHash('md5').update('file bytes').digest('hex')}"`,
            },
          }),
      ),
    ]);
    const client = clientWith(dispatcher);
    const [fromRecord] = await client.download([RECORD]);
    expect(fromRecord?.status).toBe('downloaded');
    const local = join(home, 'data', ...PATH.split('/'));
    expect(fromRecord?.localPath).toBe(local);
    expect(await readFile(local, 'utf8')).toBe('file bytes');
    const [again] = await client.download(NAME);
    expect(again?.status).toBe('skipped');
    const downloads = dispatcher.requests.filter((r) => r.url.startsWith(`${API}/download/`));
    expect(downloads.map((r) => r.url)).toEqual([`${API}/download/${PATH}`]);
  });

  it('upload sends a file from the data root with the API key to /api-key/upload, never to the store', async () => {
    const local = join(home, 'data', ...PATH.split('/'));
    await mkdir(join(local, '..'), { recursive: true });
    await writeFile(local, 'new bytes');
    const putUrl = 'http://store.test/objects/new?sig=2';
    const dispatcher = new MswDispatcher([
      http.get(`${API}/api-key/upload/*`, () =>
        HttpResponse.json({ statusCode: 200, body: JSON.stringify(putUrl) }),
      ),
      http.put('http://store.test/objects/*', () => new HttpResponse(null, { status: 200 })),
    ]);
    const client = clientWith(dispatcher, { apiKey: 'k-1' });
    const [result] = await client.upload(PATH, { cwd: home });
    expect(result).toMatchObject({ status: 'uploaded', key: PATH, bytes: 9 });
    expect(dispatcher.requests.map((r) => [r.method, r.headers.get('x-api-key')])).toEqual([
      ['GET', 'k-1'],
      ['PUT', null],
    ]);
    expect(dispatcher.requests[1]?.body.toString()).toBe('new bytes');
  });

  it('reads download arguments against the data root and previews downloads and uploads, asking nothing', async () => {
    const dispatcher = new MswDispatcher([]);
    const client = clientWith(dispatcher);
    const local = join(home, 'data', ...PATH.split('/'));
    expect(await client.readDownloadTargets([local, NAME])).toEqual({
      kind: 'files',
      paths: [PATH, NAME],
      globs: [],
    });
    expect(await client.readDownloadTargets(['data/imap/mag/l2/2025/02/'], home)).toEqual({
      kind: 'folder',
      folder: 'imap/mag/l2/2025/02/',
      filters: { instrument: 'mag', dataLevel: 'l2', startDate: '20250201', endDate: '20250228' },
    });
    const read = await client.readDownloadTargets(['imap_mag_l2_*_202501*']);
    const glob = read.kind === 'files' ? read.globs[0] : undefined;
    expect(glob?.filters).toMatchObject({ instrument: 'mag', dataLevel: 'l2' });
    expect(glob?.matches(PATH.replaceAll('l1a', 'l2'))).toBe(true);
    expect(glob?.matches(PATH)).toBe(false);
    expect(await client.previewDownloads([PATH])).toEqual([
      { path: PATH, localPath: local, action: 'fetch' },
    ]);
    await mkdir(join(local, '..'), { recursive: true });
    await writeFile(local, 'new bytes');
    expect(await client.previewDownloads([PATH])).toEqual([
      { path: PATH, localPath: local, action: 'check', localSize: 9 },
    ]);
    expect(await client.previewUploads([PATH], { cwd: home })).toEqual([
      { argument: PATH, key: PATH, localPath: local, size: 9 },
    ]);
    expect(dispatcher.requests).toEqual([]);
  });

  it('download puts a file at its layout place whatever URL the redirect names', async () => {
    // A hostile or broken service: the object URL's path climbs out, and its name is another file's.
    const objectUrl = 'http://store.test/objects/../../../../home/user/.bashrc?sig=1';
    const dispatcher = new MswDispatcher([
      http.get(`${API}/download/*`, () =>
        HttpResponse.json({
          statusCode: 302,
          headers: { Location: objectUrl },
          body: { download_url: '../../../../evil/other_file.cdf' },
        }),
      ),
      http.get(
        'http://store.test/*',
        () => new HttpResponse('payload', { headers: { 'Content-Length': '7' } }),
      ),
    ]);
    const [result] = await clientWith(dispatcher).download(PATH);
    const local = join(home, 'data', ...PATH.split('/'));
    expect(result).toMatchObject({ status: 'downloaded', localPath: local });
    // Files of the data root, its state folder (.mission-data: records and probes of the file system) aside.
    const written = (await readdir(home, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile() && !entry.parentPath.includes('.mission-data'))
      .map((entry) => join(entry.parentPath, entry.name));
    expect(written).toEqual([local]);
  });

  it('reports progress of downloads and uploads through callbacks', async () => {
    const content = Buffer.alloc(300_000, 3);
    const objectUrl = 'http://store.test/objects/one?sig=1';
    const dispatcher = new MswDispatcher([
      http.get(`${API}/download/*`, () =>
        HttpResponse.json({ statusCode: 302, body: { download_url: objectUrl } }),
      ),
      http.get('http://store.test/objects/*', () => new HttpResponse(content)),
      http.get(`${API}/upload/*`, () => HttpResponse.json({ statusCode: 200, body: objectUrl })),
      http.put('http://store.test/objects/*', () => new HttpResponse(null, { status: 200 })),
    ]);
    const client = clientWith(dispatcher);
    const downloads: DownloadProgress[] = [];
    const starts: number[] = [];
    await client.download([PATH, NAME], {
      onStart: (files) => starts.push(files),
      onProgress: (event) => downloads.push(event),
    });
    expect(starts).toEqual([1]);
    const last = downloads.at(-1);
    expect(last).toMatchObject({ path: PATH, done: 'downloaded', received: content.length });
    expect(downloads.slice(0, -1).every((event) => event.done === undefined)).toBe(true);
    expect(downloads.slice(0, -1).at(-1)?.received).toBe(content.length);

    const uploads: UploadProgress[] = [];
    const other = 'imap_mag_l1a_norm-mago_20250102_20250102_v01-00.cdf';
    await writeFile(join(home, other), content);
    await client.upload(other, { cwd: home, onProgress: (event) => uploads.push(event) });
    expect(uploads.at(-1)).toMatchObject({ done: 'uploaded', sent: content.length, total: content.length });
    expect(uploads.some((event) => event.done === undefined && event.sent === content.length)).toBe(true);
  });

  it('stops when the AbortSignal aborts, with AbortedError; other failures are ApiError', async () => {
    const controller = new AbortController();
    const dispatcher = new MswDispatcher([
      http.get(`${API}/query`, () => {
        controller.abort();
        return new HttpResponse('Bad Gateway', { status: 502 });
      }),
      http.get(`${API}/download/*`, () => HttpResponse.json({ statusCode: 404, body: 'File not found' })),
    ]);
    const client = clientWith(dispatcher, { retryBaseMs: 60_000 });
    await expect(client.query({ instrument: 'mag' }, { signal: controller.signal })).rejects.toBeInstanceOf(
      AbortedError,
    );
    // One rule for every call: an aborted call rejects with AbortedError; a batch's error carries its results
    // (a file never begun counts as not attempted, not as one more failure).
    const rejected = await client.download(PATH, { signal: controller.signal }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejected).toBeInstanceOf(AbortedError);
    const [aborted] = (rejected as AbortedError).results as DownloadResult[];
    expect(aborted?.status).toBe('failed');
    expect(aborted?.error).toMatchObject({ code: 'E_NOT_ATTEMPTED' });
    await expect(client.upload([], { signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
    const [missing] = await client.download(PATH);
    expect(missing?.error).toBeInstanceOf(ApiError);
    expect(missing?.error).toMatchObject({ status: 404, code: 'E_NOT_FOUND' });
  });
});

describe('public types (issue 19)', () => {
  it("exports every type the client's calls take or return", () => {
    expectTypeOf<Parameters<MissionDataClient['query']>[1]>().toEqualTypeOf<QueryOptions | undefined>();
    expectTypeOf<Awaited<ReturnType<MissionDataClient['query']>>>().toEqualTypeOf<ReceivedRecord[]>();
    expectTypeOf<ReturnType<MissionDataClient['queryPages']>>().toEqualTypeOf<
      AsyncIterable<ReceivedRecord[]>
    >();
    expectTypeOf<Awaited<ReturnType<MissionDataClient['download']>>>().toEqualTypeOf<DownloadResult[]>();
  });
});
