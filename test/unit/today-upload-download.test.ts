/**
 * `upload` and `download` of every kind of today's archive: today's names asked for as `/upload/<file name>`,
 * the specification's as `/upload/<storage path>`, a minor-only science version refused before any request, the
 * next version hinted in the name's own form, and a download planned to every kind's storage path.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { ApiError, ValidationError } from '../../src/core/errors.js';
import { planDownloads } from '../../src/download/batch/plan.js';
import { readableBody } from '../../src/http/body.js';
import { nameWarning, parseName } from '../../src/naming/names.js';
import { type UploadHttp, uploadFiles } from '../../src/upload/engine.js';
import { minorOnlyScienceProblem, planUploads, uploadKey } from '../../src/upload/plan.js';
import { nextVersionHint, nextVersionName } from '../../src/upload/stored.js';

const REQUESTS = requestSettings({ retryBaseMs: 1 });

/** One file of each kind, by its storage path. */
const EVERY_KIND = [
  'imap/hi/l3a/2025/01/imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf',
  'imap/glows/l3a/2021/01/imap_glows_l3a_test_20210101-cr00023_v000.0001.cdf',
  'imap/ancillary/mag/imap_mag_test_20210101_20210102_v001.cdf',
  'imap/spice/ck/imap_dps_2025_121_2025_202_07.ah.bc',
  'imap/spice/lsk/naif0012.tls',
  'imap/spice/mk/imap_sdc_metakernel_2025_v100.tm',
  'imap/quicklook/mag/l1a/2021/01/imap_mag_l1a_test_20210101-repoint00001_v001.0001.png',
  'imap/dependency/mag/l1a/2021/01/imap_mag_l1a_test_20210101_v000.0001.json',
  'imap/release/mag/imap_mag_withhold-data-release-001_20260201_20260430_v001.txt',
];
const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const SPEC = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';

/** A service and store in memory: what was asked for at `/upload/…`, and what was sent. */
function fakeClient(existing: Record<string, string> = {}) {
  const presigned: string[] = [];
  const stored: string[] = [];
  const client: UploadHttp & { presigned: string[]; stored: string[] } = {
    presigned,
    stored,
    async presignUpload(key: string) {
      presigned.push(key);
      const path = Object.keys(existing).find((held) => held === key || nameOf(held) === key);
      if (path) {
        throw new ApiError(
          { method: 'GET', url: `/upload/${key}`, status: 409, message: `${path} already exists.` },
          { code: 'E_ALREADY_EXISTS' },
        );
      }
      return `http://objects.test/${key}?signature=x`;
    },
    async putObject(url, options) {
      for await (const _chunk of options.open() as AsyncIterable<Buffer>);
      stored.push(new URL(url).pathname.slice(1));
      return { etag: undefined };
    },
    async resolveDownload(path: string) {
      return `http://objects.test/${path}?signature=get`;
    },
    async getObject(url) {
      const bytes = existing[new URL(url).pathname.slice(1)] ?? '';
      return {
        status: 206,
        headers: {
          'content-range': `bytes 0-0/${Buffer.byteLength(bytes)}`,
          etag: `"${createHash('md5').update(bytes).digest('hex')}"`,
        },
        body: readableBody(Readable.from([Buffer.from(bytes).subarray(0, 1)])),
      };
    },
  };
  return client;
}

let home: string;
let dataDir: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-today-upload-'));
  dataDir = join(home, 'data');
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function place(path: string, contents = 'bytes'): Promise<string> {
  const local = join(dataDir, ...path.split('/'));
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, contents);
  return local;
}

describe('upload of every kind', () => {
  it("asks /upload/<file name> for today's names and /upload/<storage path> for the specification's", async () => {
    for (const path of [...EVERY_KIND, SPEC]) await place(path);
    const client = fakeClient();
    const results = await uploadFiles(client, [...EVERY_KIND, SPEC], {
      requests: REQUESTS,
      dataDir,
      cwd: home,
    });
    expect(results.map((result) => [result.key, result.status])).toEqual(
      [...EVERY_KIND, SPEC].map((path) => [path, 'uploaded']),
    );
    // Files are asked for concurrently: the order of the requests is not the batch's.
    expect([...client.presigned].sort()).toEqual([...EVERY_KIND.map(nameOf), SPEC].sort());
    expect(uploadKey(parseName(nameOf(SPEC)))).toBe(SPEC);
  });

  it('finds a bare name of every kind at its place below the data root', async () => {
    for (const path of EVERY_KIND) await place(path);
    const client = fakeClient();
    const results = await uploadFiles(client, EVERY_KIND.map(nameOf), {
      requests: REQUESTS,
      dataDir,
      cwd: home,
    });
    expect(results.map((result) => result.localPath)).toEqual(
      EVERY_KIND.map((path) => join(dataDir, ...path.split('/'))),
    );
    expect(results.every((result) => result.status === 'uploaded')).toBe(true);
  });

  it('refuses a minor-only science name before any request, saying why and what to do', async () => {
    const legacy = 'imap/mag/l1a/2024/01/imap_mag_l1a_test_20240101_v001.cdf';
    await place(legacy);
    const client = fakeClient();
    const error = await uploadFiles(client, [legacy], { requests: REQUESTS, dataDir, cwd: home }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as ValidationError).message;
    expect(message).toContain('imap_mag_l1a_test_20240101_v001.cdf: the version v001 is minor-only (vNNN)');
    expect(message).toContain('only with a major.minor version (vNNN.NNNN)');
    expect(message).toContain('imap_mag_l1a_test_20240101_v001.0001.cdf');
    expect(client.presigned).toEqual([]);
    // Quicklooks, dependency files, ancillary files and release manifests keep their vNNN.
    for (const name of [
      'imap_mag_l1a_test_20240101_v001.png',
      'imap_mag_l1a_test_20240101_v001.json',
      'imap_mag_test_20240101_v001.cdf',
      'imap_mag_release_20240101_v001.txt',
    ]) {
      expect(minorOnlyScienceProblem(parseName(name)), name).toBeUndefined();
    }
    expect(planUploads(['imap_mag_l1a_test_20240101_v001.png'])).toHaveLength(1);
  });

  it('refuses a name whose end date is before its start date, of any kind with two dates', () => {
    for (const name of ['imap_mag_test_20210102_20210101_v001.cdf', 'imap_2025_034_2025_032_003.ah.bc']) {
      expect(() => planUploads([name]), name).toThrow(/end date .* is before the start date/);
    }
  });

  it("hints the next version of a file stored with other bytes in the name's own form", async () => {
    const path = EVERY_KIND[0] as string;
    await place(path, 'local bytes');
    const client = fakeClient({ [path]: 'other bytes' });
    const [result] = await uploadFiles(client, [path], { requests: REQUESTS, dataDir, cwd: home });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'E_ALREADY_EXISTS' } });
    expect((result?.error as ApiError | undefined)?.hint).toContain(
      'imap_hi_l3a_ena-45_20250105-repoint00042_v001.0003.cdf',
    );
  });
});

describe('the next version of a name', () => {
  it('is the next in the form the name has', () => {
    const next = (name: string) => nextVersionName(parseName(name));
    expect(next('imap_mag_l1a_norm_20240101_20240101_v01-02.cdf')).toBe(
      'imap_mag_l1a_norm_20240101_20240101_v01-03.cdf',
    );
    expect(next('imap_mag_l1a_norm_20240101_20240101_v01-99.cdf')).toBe(
      'imap_mag_l1a_norm_20240101_20240101_v02-00.cdf',
    );
    expect(next('imap_mag_l1a_burst_20210101_v001.0002.cdf')).toBe(
      'imap_mag_l1a_burst_20210101_v001.0003.cdf',
    );
    expect(next('imap_mag_l1a_burst_20210101_v001.9999.cdf')).toBe(
      'imap_mag_l1a_burst_20210101_v002.0000.cdf',
    );
    expect(next('imap_mag_l1a_test_20210101-cr00023_v000.0001.cdf')).toBe(
      'imap_mag_l1a_test_20210101-cr00023_v000.0002.cdf',
    );
    expect(next('imap_mag_test_20210101_20210102_v001.cdf')).toBe('imap_mag_test_20210101_20210102_v002.cdf');
    expect(next('imap_mag_release_20260201_v009.txt')).toBe('imap_mag_release_20260201_v010.txt');
    expect(next('naif0012.tls')).toBe('naif0013.tls');
    expect(next('imap_sdc_metakernel_2025_v100.tm')).toBe('imap_sdc_metakernel_2025_v101.tm');
    expect(next('imap_2025_122_2025_122_01.spin.csv')).toBe('imap_2025_122_2025_122_02.spin.csv');
  });

  it('is not guessed for a kernel whose name has no version or whose "version" is a date', () => {
    expect(nextVersionName(parseName('imap_recon_20250101_20250201.bsp'))).toBeUndefined();
    expect(nextVersionName(parseName('earth_000101_251112_250817.bpc'))).toBeUndefined();
    expect(nextVersionHint(parseName('earth_000101_251112_250817.bpc'))).toMatch(/a name of its own/);
  });
});

describe('download of every kind', () => {
  it('plans a bare name, or its storage path, of every kind to its storage path below the data root', () => {
    const byName = planDownloads(EVERY_KIND.map(nameOf), dataDir);
    expect(byName.map((plan) => plan.localPath)).toEqual(
      EVERY_KIND.map((path) => join(dataDir, ...path.split('/'))),
    );
    expect(byName.map((plan) => plan.file.kind)).toEqual([
      'science',
      'science',
      'ancillary',
      'spice',
      'spice',
      'spice',
      'quicklook',
      'dependency',
      'release',
    ]);
    expect(planDownloads(EVERY_KIND, dataDir).map((plan) => plan.file.path)).toEqual(EVERY_KIND);
  });

  it('refuses a kernel in the wrong folder, saying where it belongs', () => {
    expect(() => planDownloads(['imap/spice/spk/naif0012.tls'], dataDir)).toThrow(
      /imap\/spice\/lsk\/naif0012\.tls/,
    );
  });

  it('has a warning for a science descriptor of digits only', () => {
    expect(nameWarning(parseName('imap_mag_l2_20250101_20250102_v001.cdf'))).toMatch(/all digits/);
    expect(nameWarning(parseName(nameOf(EVERY_KIND[0] as string)))).toBeUndefined();
  });
});
