import { createHash } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { BackgroundChecksum } from '../../src/core/checksums/background-checksum.js';
import { InlineChecksum, NoChecksum } from '../../src/core/checksums/checksum.js';
import { CombinedCrc32 } from '../../src/core/checksums/crc32-from-ranges.js';
import { downloadFiles } from '../../src/download/engine.js';
import { checksumFor } from '../../src/download/object/object-checksum.js';
import { HttpClient } from '../../src/service/client.js';
import { pattern } from '../helpers/bytes.js';

const GIB = 1024 ** 3;

describe('the checksum a download computes', () => {
  const readBack = () => {
    throw new Error('nothing is read back');
  };

  it('computes none for an object whose store states none (SSE-KMS, multipart): no MD5, no thread', async () => {
    const part = { descriptor: -1, readBack };
    for (const split of [false, true]) {
      const checksum = checksumFor(undefined, part, GIB, split);
      expect(checksum).toBeInstanceOf(NoChecksum);
      checksum.update(Buffer.alloc(16));
      checksum.flushed(16);
      checksum.catchUp(GIB);
      expect((await checksum.digest()).length).toBe(0);
      checksum.close();
    }
  });

  it('hashes a large object with a stated MD5 on a thread of its own, a small one in line', () => {
    const fd = openSync(import.meta.filename, 'r');
    try {
      const large = checksumFor('md5', { descriptor: fd, readBack }, GIB, true);
      expect(large).toBeInstanceOf(BackgroundChecksum);
      large.close();
      expect(checksumFor('md5', { descriptor: fd, readBack }, 1024, false)).toBeInstanceOf(InlineChecksum);
      // One stream of CRC-32 stays in line: zlib's CRC-32 costs less than a thread's reading back.
      expect(checksumFor('crc32', { descriptor: fd, readBack }, GIB, false)).toBeInstanceOf(InlineChecksum);
    } finally {
      closeSync(fd);
    }
  });

  it('joins the CRC-32s of parallel parts, taken as they arrive, and starts no thread for them', () => {
    const part = {
      get descriptor(): number {
        throw new Error('no thread reads the part back');
      },
      readBack,
    };
    for (const total of [1024, 8 * 1024 * 1024, GIB, 1024 * GIB]) {
      const checksum = checksumFor('crc32', part, total, true);
      expect(checksum).toBeInstanceOf(CombinedCrc32);
      expect(checksum.feedFrom).toBeTypeOf('function');
      checksum.close();
    }
    // The other algorithms of parallel parts are still read back, on the hashing thread for a large object.
    const fd = openSync(import.meta.filename, 'r');
    try {
      const md5 = checksumFor('md5', { descriptor: fd, readBack }, GIB, true);
      expect(md5).toBeInstanceOf(BackgroundChecksum);
      expect(md5.feedFrom).toBeUndefined();
      md5.close();
      const sha256 = checksumFor('sha256', { descriptor: fd, readBack }, 1024, true);
      expect(sha256).toBeInstanceOf(InlineChecksum);
      expect(sha256.feedFrom).toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });
});

/**
 * A service whose `/download` redirects to an object store that states nothing of the object (no ETag, no
 * Content-MD5, no x-amz-checksum-*): the only checksum is the one the redirect's URL carries in its fragment.
 */
describe('the checksum the download answer states in its URL', () => {
  const PATH = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240101_20240101_v01-00.cdf';
  const BYTES = pattern(200_000, 31);
  const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
  /** What the next redirects state (a fragment, without `#`), how they are sent, and the object requests seen. */
  const service = { fragment: '', envelope: false, objectRequests: [] as string[] };
  let server: Server;
  let base: string;
  let dataDir: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '';
      if (url.startsWith('/download/')) {
        const fragment = service.fragment === '' ? '' : `#${service.fragment}`;
        const location = `${base}/objects/${url.slice('/download/'.length)}?X-Signature=1${fragment}`;
        if (service.envelope) {
          // The specification's envelope, as HTTP 200 (the wire form where no HTTP header says anything).
          const envelope = {
            statusCode: 302,
            headers: { Location: location },
            body: { download_url: location },
          };
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(envelope));
        } else res.writeHead(302, { Location: location }).end();
        return;
      }
      service.objectRequests.push(url);
      res.writeHead(200, { 'Content-Length': String(BYTES.length) }).end(BYTES);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = await mkdtemp(join(tmpdir(), 'mission-stated-'));
    service.objectRequests.length = 0;
  });

  async function download(options: { requireChecksum?: boolean } = {}) {
    const client = new HttpClient({ url: base, retries: 1, retryBaseMs: 1 });
    try {
      const requests = requestSettings({ retries: 1, retryBaseMs: 1 });
      const [result] = await downloadFiles(client, [PATH], { requests, dataDir, ...options });
      return result;
    } finally {
      await client.close();
    }
  }

  /** Every file under the data root but the tool's own state folder, parts included. */
  async function filesLeft(): Promise<string[]> {
    const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && !entry.parentPath.includes('.mission-data'))
      .map((entry) => entry.name);
  }

  it.each([false, true])(
    'verifies the bytes against it (envelope %s), and never sends it to the store',
    async (envelope) => {
      Object.assign(service, { envelope, fragment: `md5=${md5(BYTES)}` });
      const result = await download({ requireChecksum: true });
      expect(result?.error).toBeUndefined();
      expect(result).toMatchObject({ status: 'downloaded', verified: true, checksum: 'md5' });
      expect((await readFile(join(dataDir, PATH))).equals(BYTES)).toBe(true);
      expect(service.objectRequests).toEqual([`/objects/${PATH}?X-Signature=1`]);
    },
  );

  it.each([false, true])(
    'refuses a body that does not match it (envelope %s): E_CHECKSUM, no file and no part left',
    async (envelope) => {
      const other = createHash('sha256').update('other bytes').digest('hex');
      Object.assign(service, { envelope, fragment: `sha256=${other}` });
      const result = await download();
      expect(result).toMatchObject({ status: 'failed', verified: false, error: { code: 'E_CHECKSUM' } });
      expect(result?.error?.message).toMatch(/do not match the object's SHA256 from its download URL/);
      expect(await filesLeft()).toEqual([]);
    },
  );

  it('checks a file already in place against it: the same bytes are kept without fetching them, other bytes replaced', async () => {
    Object.assign(service, { envelope: false, fragment: `md5=${md5(BYTES)}` });
    await mkdir(dirname(join(dataDir, PATH)), { recursive: true });
    await writeFile(join(dataDir, PATH), BYTES);
    const kept = await download({ requireChecksum: true });
    expect(kept).toMatchObject({ status: 'skipped', verified: true });
    const altered = Buffer.from(BYTES);
    altered[0] = (altered[0] as number) ^ 0xff;
    await writeFile(join(dataDir, PATH), altered);
    const replaced = await download({ requireChecksum: true });
    expect(replaced).toMatchObject({ status: 'replaced', verified: true });
    expect((await readFile(join(dataDir, PATH))).equals(BYTES)).toBe(true);
  });

  it('without it, an object the store states nothing of is not verified, and refused when a checksum is required', async () => {
    Object.assign(service, { envelope: false, fragment: '' });
    expect(await download()).toMatchObject({ status: 'downloaded', verified: false });
    await rm(join(dataDir, PATH));
    const required = await download({ requireChecksum: true });
    expect(required).toMatchObject({ status: 'failed', error: { code: 'E_UNVERIFIED' } });
    expect(required?.error?.message).toMatch(/no digest in its download URL/);
    expect(await filesLeft()).toEqual([]);
  });
});
