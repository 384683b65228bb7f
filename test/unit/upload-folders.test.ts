/** `upload` and the folders a file is found in (issue 19, point 8); a name whose dates are reversed. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { ValidationError } from '../../src/core/errors.js';
import { parseName } from '../../src/naming/names.js';
import { previewUploads, type UploadHttp, uploadFiles } from '../../src/upload/engine.js';

/** Retries as the client's, with backoff short enough for a test. */
const REQUESTS = requestSettings({ retryBaseMs: 1 });

const L1A = 'imap_mag_l1a_norm_20250410_20250410_v01-00.cdf';
const L1A_KEY = `imap/mag/l1a/2025/04/${L1A}`;

function recordingClient() {
  const presigned: string[] = [];
  const client: UploadHttp & { presigned: string[] } = {
    presigned,
    async presignUpload(key: string) {
      presigned.push(key);
      return `http://objects.test/${key}`;
    },
    async putObject(_url, options) {
      for await (const _chunk of options.open()) {
        // read it all, as a real PUT does
      }
      return { etag: undefined };
    },
    async resolveDownload() {
      throw new Error('not used');
    },
    async getObject() {
      throw new Error('not used');
    },
  };
  return client;
}

let home: string;
let dataDir: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mission-upload-folders-'));
  dataDir = join(home, 'data');
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function place(path: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, 'bytes');
  return path;
}

async function refusal(attempt: Promise<unknown>): Promise<ValidationError> {
  const error = await attempt.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

describe('a file found in a folder that disagrees with its name', () => {
  it.each([
    [
      'an l1a name below an l1b folder',
      `imap/mag/l1b/2025/04/${L1A}`,
      'the data level folder is "l1b" but the name\'s data level is l1a',
    ],
    [
      'an April date below month 05',
      `imap/mag/l1a/2025/05/${L1A}`,
      'the month folder is "05" but the name\'s start date is in month 04',
    ],
  ])('%s is refused before any request, with the expected path', async (_case, path, why) => {
    const found = await place(join(dataDir, ...path.split('/')));
    const client = recordingClient();
    const error = await refusal(uploadFiles(client, [path], { requests: REQUESTS, dataDir, cwd: home }));
    expect(error.code).toBe('E_WRONG_FOLDER');
    expect(error.problems).toEqual([
      `${found} is in the wrong folder: ${why}; expected ${join(dataDir, ...L1A_KEY.split('/'))}.`,
    ]);
    expect(error.hint).toMatch(/upload it by its name alone/);
    expect(client.presigned).toEqual([]);
  });

  it('is refused when reached from the working directory inside the data root', async () => {
    await place(join(dataDir, 'imap/mag/l1b/2025/04', L1A));
    const error = await refusal(
      uploadFiles(recordingClient(), [`04/${L1A}`], {
        requests: REQUESTS,
        dataDir,
        cwd: join(dataDir, 'imap/mag/l1b/2025'),
      }),
    );
    expect(error.problems[0]).toContain(`expected ${join(dataDir, 'imap/mag/l1a/2025/04', L1A)}`);
  });

  it('is refused in a tree of the layout outside the data root too', async () => {
    const found = await place(join(home, 'products', 'imap/mag/l1b/2025/04', L1A));
    const error = await refusal(
      uploadFiles(recordingClient(), [found], { requests: REQUESTS, dataDir, cwd: home }),
    );
    expect(error.problems).toEqual([
      expect.stringContaining(`expected ${join(home, 'products', ...L1A_KEY.split('/'))}.`),
    ]);
  });

  it('is uploaded by its name with ignoreFolder', async () => {
    const path = `imap/mag/l1b/2025/04/${L1A}`;
    await place(join(dataDir, ...path.split('/')));
    const client = recordingClient();
    const results = await uploadFiles(client, [path], {
      requests: REQUESTS,
      dataDir,
      cwd: home,
      ignoreFolder: true,
    });
    expect(results).toMatchObject([{ key: L1A_KEY, status: 'uploaded', bytes: 5 }]);
    expect(client.presigned).toEqual([L1A_KEY]);
  });

  it('a file at its place, loose at the top of the root, or in folders of no layout is uploaded', async () => {
    await place(join(dataDir, ...L1A_KEY.split('/')));
    const loose = 'imap_mag_l1b_norm_20250410_20250410_v01-00.cdf';
    await place(join(dataDir, loose));
    const elsewhere = await place(
      join(home, 'out', 'april', 'imap_mag_l2_norm_20250410_20250410_v01-00.cdf'),
    );
    const client = recordingClient();
    const results = await uploadFiles(client, [L1A_KEY, loose, elsewhere], {
      requests: REQUESTS,
      dataDir,
      cwd: home,
    });
    expect(results.map((result) => result.status)).toEqual(['uploaded', 'uploaded', 'uploaded']);
  });

  it('is reported by the dry run for that file alone', async () => {
    const atItsPlace = 'imap/mag/l1b/2025/04/imap_mag_l1b_norm_20250410_20250410_v01-00.cdf';
    await place(join(dataDir, 'imap/mag/l1b/2025/04', L1A));
    await place(join(dataDir, ...atItsPlace.split('/')));
    const previews = await previewUploads([`imap/mag/l1b/2025/04/${L1A}`, atItsPlace], {
      dataDir,
      cwd: home,
    });
    expect(previews[0]?.error?.message).toMatch(/is in the wrong folder: .*; expected /);
    expect(previews[1]?.localPath).toBe(join(dataDir, ...atItsPlace.split('/')));
    const anyway = await previewUploads([`imap/mag/l1b/2025/04/${L1A}`], {
      dataDir,
      cwd: home,
      ignoreFolder: true,
    });
    expect(anyway[0]?.error).toBeUndefined();
  });
});

describe('a name whose end date is before its start date', () => {
  const REVERSED = 'imap_mag_l1a_norm_20250410_20250401_v01-00.cdf';

  it('is refused by upload with both dates, before any file access or request', async () => {
    const client = recordingClient();
    const error = await refusal(uploadFiles(client, [REVERSED], { requests: REQUESTS, dataDir, cwd: home }));
    expect(error.problems).toEqual([
      `${REVERSED}: Invalid dates: the end date 20250401 is before the start date 20250410.`,
    ]);
    expect(client.presigned).toEqual([]);
  });

  it('is refused for an ancillary name with two dates, not for one with a single date', async () => {
    const error = await refusal(
      uploadFiles(recordingClient(), ['imap_mag_cal_20250410_20250101_v01-00.json'], {
        requests: REQUESTS,
        dataDir,
        cwd: home,
      }),
    );
    expect(error.problems[0]).toMatch(/end date 20250101 is before the start date 20250410/);
    await place(join(dataDir, 'imap_mag_cal_20250410_v01-00.json'));
    const results = await uploadFiles(recordingClient(), ['imap_mag_cal_20250410_v01-00.json'], {
      requests: REQUESTS,
      dataDir,
      cwd: home,
    });
    expect(results[0]?.status).toBe('uploaded');
  });

  it('is still read by the naming rules, so download and query reach such a file of the archive', () => {
    expect(parseName(REVERSED)).toMatchObject({ startDate: '20250410', endDate: '20250401' });
  });
});
