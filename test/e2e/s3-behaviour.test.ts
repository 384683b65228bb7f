/**
 * The client against object stores and networks as they really behave, played by the reference server's
 * fault modes: each case names the bullet of issue 17 it answers (encrypted objects, 500/503, redirects,
 * expiring URLs). The library is driven in-process; the lost-network cases spawn the bin (see lost-network).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import type { FaultOptions, ReferenceServer, RequestLogEntry } from '../../src/server/index.js';
import { startReferenceServer } from '../../src/server/index.js';
import { bytesFor, cleanup, putFile, scienceName, tempDir } from '../helpers/e2e.js';

const NAME = scienceName('mag', 5);
const PATH = `imap/mag/l1a/2024/01/${NAME}`;
const CONTENT = bytesFor('s3-behaviour', 300_000);

let storeDir: string;
let dataDir: string;
let server: ReferenceServer | undefined;
let log: RequestLogEntry[];

beforeEach(async () => {
  storeDir = await tempDir('mission-store-');
  dataDir = await tempDir('mission-data-');
  log = [];
  await putFile(storeDir, PATH, CONTENT);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanup(storeDir);
  await cleanup(dataDir);
});

async function serve(faults: FaultOptions): Promise<ReferenceServer> {
  server = await startReferenceServer({
    store: storeDir,
    port: 0,
    secret: 'fault-test-secret-0123456789',
    faults,
    log: (entry) => log.push(entry),
  });
  return server;
}

async function download(
  faults: FaultOptions,
  options: { requireChecksum?: boolean; retries?: number; retryBaseMs?: number } = {},
) {
  const running = await serve(faults);
  const client = createClient({
    url: running.url,
    dataDir,
    env: {},
    configFile: join(dataDir, 'no-config.json'),
    retryBaseMs: options.retryBaseMs ?? 5,
    ...(options.retries === undefined ? {} : { retries: options.retries }),
  });
  try {
    const [result] = await client.download(PATH, { requireChecksum: options.requireChecksum });
    return result;
  } finally {
    await client.close();
  }
}

const objectGets = () => log.filter((entry) => entry.method === 'GET' && entry.path.startsWith('/objects/'));

describe('encrypted objects: an ETag that is not an MD5 is never compared as one', () => {
  it('SSE-KMS without x-amz-checksum-*: downloaded, counted as not verified, no E_CHECKSUM', async () => {
    const result = await download({ kms: true });
    expect(result?.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'downloaded', verified: false });
    expect(await readFile(join(dataDir, PATH))).toEqual(CONTENT);
  });

  it.each(['crc32c', 'crc64nvme', 'sha256', 'sha1', 'crc32'] as const)(
    'SSE-KMS with x-amz-checksum-%s: verified with it',
    async (algorithm) => {
      const result = await download({ kms: true, checksums: [algorithm] });
      expect(result?.error).toBeUndefined();
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
    },
  );

  // This server's S3 store no longer signs x-amz-checksum-mode (a URL that does is refused to every client that
  // simply follows the redirect); the `checksums` fault plays a service whose URLs still sign it.
  it('a KMS object stored with a CRC-32C checksum, behind a service whose URLs sign x-amz-checksum-mode, is verified on download: the client sends the header, and only then is the checksum stated', async () => {
    const result = await download({ kms: true, checksums: ['crc32c'] });
    expect(result).toMatchObject({ status: 'downloaded', verified: true, checksum: 'crc32c' });
    const address = new URL(`/download/${PATH}`, server?.url);
    const redirect = await fetch(address, { redirect: 'manual' });
    const url = new URL(redirect.headers.get('location') ?? '');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-amz-checksum-mode');
    const without = await fetch(url);
    await without.arrayBuffer();
    expect(without.headers.get('x-amz-checksum-crc32c')).toBeNull();
    const withMode = await fetch(url, { headers: { 'x-amz-checksum-mode': 'ENABLED' } });
    await withMode.arrayBuffer();
    expect(withMode.headers.get('x-amz-checksum-crc32c')).toMatch(/^[A-Za-z0-9+/]{6}==$/);
  });

  it('--require-checksum makes an object without a usable checksum a failure (E_UNVERIFIED), nothing saved', async () => {
    const result = await download({ kms: true }, { requireChecksum: true });
    expect(result?.status).toBe('failed');
    expect(result?.error).toMatchObject({ code: 'E_UNVERIFIED' });
    expect(result?.error?.message).toMatch(/states no checksum/);
  });
});

describe('500 InternalError and 503 SlowDown from the store are retried', () => {
  it.each([500, 503] as const)(
    'a burst of two %i answers ends in a complete, verified file',
    async (status) => {
      const result = await download({ burst: { status, count: 2 }, xmlErrors: true });
      expect(result?.error).toBeUndefined();
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect(objectGets().filter((entry) => entry.status === status)).toHaveLength(2);
    },
  );

  it("when the retries run out, the error shows the store's XML Code and Message", async () => {
    const result = await download({ burst: { status: 500, count: 100 }, xmlErrors: true }, { retries: 1 });
    expect(result?.status).toBe('failed');
    expect(result?.error?.message).toMatch(/500 InternalError: We encountered an internal error/);
  });
});

describe('redirects from the store are followed', () => {
  it('a 307 on the object GET is followed to the bytes', async () => {
    const result = await download({ redirect: true });
    expect(result?.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'downloaded', verified: true });
    expect(objectGets().map((entry) => entry.status)).toEqual([307, 200]);
  });

  it('a 307 on the upload PUT is followed and the body sent again from the file', async () => {
    const running = await serve({ redirect: true });
    const name = scienceName('swe', 7);
    const local = await putFile(dataDir, name, bytesFor('upload', 50_000));
    const client = createClient({
      url: running.url,
      dataDir,
      env: {},
      configFile: join(dataDir, 'none.json'),
      retryBaseMs: 5,
    });
    try {
      const [result] = await client.upload(local);
      expect(result?.error).toBeUndefined();
      expect(result?.status).toBe('uploaded');
    } finally {
      await client.close();
    }
    const puts = log.filter((entry) => entry.method === 'PUT').map((entry) => entry.status);
    expect(puts).toEqual([307, 200]);
    const stored = join(storeDir, ...`imap/swe/l1a/2024/01/${name}`.split('/'));
    expect(await readFile(stored)).toEqual(await readFile(local));
  });
});

describe('a pre-signed URL that expires during a transfer is asked for again', () => {
  it('download: the connection drops, the URL expires meanwhile, a new one is asked for and the rest fetched (If-Match)', async () => {
    const big = bytesFor('expiring', 12 * 1024 * 1024);
    await putFile(storeDir, PATH, big);
    const result = await download(
      {
        // Two seconds: S3 signs with a date in whole seconds, so a URL of one second may have almost nothing left
        // when it arrives. The first URL has expired by the retry that follows the outage (3 s after it began).
        urlLifeSeconds: 2,
        xmlErrors: true,
        outage: { afterBytes: 4 * 1024 * 1024, forMs: 2_100 },
      },
      // The default backoff (1 s, doubling): three retries span more than the outage.
      { retryBaseMs: 1000 },
    );
    expect(result?.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'downloaded', verified: true });
    expect((await readFile(join(dataDir, PATH))).equals(big)).toBe(true);
    const downloads = log.filter((entry) => entry.path.startsWith('/download/'));
    expect(downloads).toHaveLength(2);
    const statuses = objectGets().map((entry) => entry.status);
    // The first GET was cut by the outage after its 200 had gone out: logged 499, with the 200 it had sent.
    expect(objectGets()[0]).toMatchObject({ status: 499, sentStatus: 200, aborted: true });
    expect(statuses).toContain(403);
    // The rest came as a range of the same object: not from byte 0 again.
    expect(statuses.at(-1)).toBe(206);
    // Counted at the server: the bytes sent after the renewal are the object's size less those held.
    const gets = objectGets();
    const resumed = gets.at(-1)?.bytes ?? 0;
    expect(resumed).toBeGreaterThan(0);
    expect(resumed).toBeLessThan(big.length);
  });

  it('upload: a PUT refused as expired asks /upload again and sends the file again', async () => {
    // Two seconds, not one: S3 signs with a date in whole seconds (see the download case above).
    const running = await serve({ urlLifeSeconds: 2, xmlErrors: true });
    const name = scienceName('hit', 9);
    const local = await putFile(dataDir, name, bytesFor('late', 20_000));
    const client = createClient({
      url: running.url,
      dataDir,
      env: {},
      configFile: join(dataDir, 'none.json'),
      retryBaseMs: 5,
    });
    let delayed = false;
    try {
      const [result] = await client.upload(local, {
        // A pause between the answer and the PUT longer than the URL lives: the first PUT goes out after it
        // expired.
        onProgress: (event) => {
          if (event.phase !== 'sending' || delayed) return;
          delayed = true;
          const until = Date.now() + 2_100;
          while (Date.now() < until) {
            // A slow disk, played by blocking this thread.
          }
        },
      });
      expect(result?.error).toBeUndefined();
      expect(result?.status).toBe('uploaded');
    } finally {
      await client.close();
    }
    expect(log.filter((entry) => entry.path.includes('/upload/'))).toHaveLength(2);
    expect(log.filter((entry) => entry.method === 'PUT').map((entry) => entry.status)).toEqual([403, 200]);
  });
});
