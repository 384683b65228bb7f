import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { downloadFiles } from '../../src/download/engine.js';
import { parseName } from '../../src/naming/names.js';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { HttpClient } from '../../src/service/client.js';
import { startPostgres, startS3Store } from '../helpers/backends.js';
import { selfSignedCertificate } from '../helpers/certificate.js';
import { bytesFor, cleanup, scienceName, tempDir, waitFor } from '../helpers/e2e.js';

let s3: Awaited<ReturnType<typeof startS3Store>>;
let db: Awaited<ReturnType<typeof startPostgres>>;
let raw: S3Client;
const credentials = () => ({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
const path = (name: string) => `imap/mag/l1a/2024/01/${name}`;

beforeAll(async () => {
  [s3, db] = await Promise.all([startS3Store(), startPostgres()]);
  await s3.createBucket('bucket');
  raw = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: credentials(),
  });
});
afterAll(async () => {
  raw?.destroy();
  await Promise.all([s3?.stop(), db?.stop()]);
});

function start(
  prefix: string,
  options: Partial<Omit<Parameters<typeof startReferenceServer>[0], 'store' | 'storeDir'>> = {},
) {
  return startReferenceServer({
    store: `s3://bucket/${prefix}`,
    s3Endpoint: s3.endpoint,
    s3Credentials: credentials(),
    wire: 'gateway',
    ...options,
  });
}

describe('reference server on a bucket', () => {
  it('releases a reservation whose upload never came once the URL expired; serves no /objects/ routes', async () => {
    const server = await start('expiry', {
      uploadUrlLifetimeSeconds: 1,
      reservationGraceMs: 0,
      confirmIntervalMs: 100,
    });
    try {
      const name = scienceName('mag', 1);
      expect((await fetch(`${server.url}/upload/${name}`)).status).toBe(200);
      expect((await fetch(`${server.url}/upload/${name}`)).status).toBe(409);
      expect(
        await waitFor(async () => (await fetch(`${server.url}/upload/${name}`)).status === 200, 5_000),
      ).toBe(true);
      expect((await fetch(`${server.url}/objects/${path(name)}`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('signs the Content-MD5 the /upload request carries: the store takes only those bytes', async () => {
    const server = await start('md5', { indexUrl: db.url });
    try {
      const name = scienceName('mag', 2);
      const bytes = Buffer.from('the bytes that were hashed');
      const contentMd5 = createHash('md5').update(bytes).digest('base64');
      const url = (await (
        await fetch(`${server.url}/upload/${name}`, { headers: { 'Content-MD5': contentMd5 } })
      ).json()) as string;
      expect((await fetch(url, { method: 'PUT', body: bytes })).status).toBe(403);
      expect(
        (await fetch(url, { method: 'PUT', body: bytes, headers: { 'Content-MD5': contentMd5 } })).status,
      ).toBe(200);
      const records = (await (await fetch(`${server.url}/query?instrument=mag`)).json()) as {
        file_path: string;
      }[];
      expect(records.map((record) => record.file_path)).toEqual([path(name)]);
      expect((await fetch(`${server.url}/upload/x`, { headers: { 'Content-MD5': 'nope' } })).status).toBe(
        400,
      );
    } finally {
      await server.close();
    }
  });

  it('GET /health states the store and the index, the password masked', async () => {
    const server = await start('health', { indexUrl: db.url });
    try {
      const answer = await fetch(`${server.url}/health`);
      expect(answer.status).toBe(200);
      const report = (await answer.json()) as {
        status: string;
        store: { location: string; ok: boolean };
        index: { location: string; ok: boolean };
      };
      expect(report.status).toBe('ok');
      expect(report.store).toEqual({ location: 's3://bucket/health', ok: true });
      expect(report.index.ok).toBe(true);
      expect(report.index.location).toMatch(/^postgres:\/\/test:\*\*\*@127\.0\.0\.1:\d+\/test$/);
    } finally {
      await server.close();
    }
  });

  it('reindex adds the objects other tools put in the bucket and names those that break the naming rules', async () => {
    const server = await start('reindex', { indexUrl: db.url });
    try {
      const good = scienceName('mag', 3);
      await raw.send(new PutObjectCommand({ Bucket: 'bucket', Key: `reindex/${path(good)}`, Body: 'x' }));
      await raw.send(
        new PutObjectCommand({ Bucket: 'bucket', Key: 'reindex/imap/mag/readme.txt', Body: 'y' }),
      );
      const misplaced = path(scienceName('mag', 4)).replace('/2024/01/', '/2024/02/');
      await raw.send(new PutObjectCommand({ Bucket: 'bucket', Key: `reindex/${misplaced}`, Body: 'z' }));
      const query = async () =>
        ((await (await fetch(`${server.url}/query?instrument=mag`)).json()) as { file_path: string }[]).map(
          (r) => r.file_path,
        );
      expect(await query()).not.toContain(path(good));
      const report = await server.reindex();
      expect(report.added).toBe(1);
      expect(report.skipped).toEqual([
        {
          key: misplaced,
          problem: `the month folder is "02" but the name's start date is in month 01; expected ${path(scienceName('mag', 4))} (<mission>/<instrument>/<data_level>/<year>/<month>/<filename>).`,
        },
        {
          key: 'imap/mag/readme.txt',
          problem: expect.stringMatching(/^Invalid filename readme\.txt\. Expected pattern/),
        },
      ]);
      expect(await query()).toContain(path(good));
      expect((await server.reindex()).added).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('serves HTTPS with --tls-cert/--tls-key, and hands out https URLs', async () => {
    const dir = await tempDir('tls-');
    let server: ReferenceServer | undefined;
    try {
      await selfSignedCertificate(dir);
      const [cert, key] = await Promise.all([
        readFile(join(dir, 'cert.pem')),
        readFile(join(dir, 'key.pem')),
      ]);
      server = await startReferenceServer({ store: join(dir, 'store'), tls: { cert, key } });
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const status = await new Promise<number>((resolve, reject) => {
        httpsRequest(`${server?.url}/health`, { ca: cert }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(status).toBe(200);
    } finally {
      await server?.close();
      await cleanup(dir);
    }
  });
});

/** One name of each kind and generation: science (plain, repointing, CR), ancillary, SPICE, quicklook, dependency, release. */
const EVERY_KIND = [
  scienceName('mag', 9),
  'imap_hi_l3a_ena-45_20250105-repoint00042_v001.0002.cdf',
  'imap_glows_l3b_ion-rate_20250105-cr02291_v001.0000.cdf',
  'imap_mag_calibration_20250101_v001.cdf',
  'naif0012.tls',
  'imap_2025_032_2025_034_003.ah.bc',
  'imap_pred_od025_20260303_20260414_v01.bsp',
  'imap_swe_l1b_sci_20250105_v001.0000.png',
  'imap_swe_l1b_sci_20250105_v001.0000.json',
  'imap_hit_data-release-001_20250101_20250131_v001.txt',
];

const hash = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest();

describe('a download URL of a server on a bucket works for every HTTP client', () => {
  it.each(['gateway', 'envelope'] as const)(
    '%s: every kind uploaded by its bare name; a plain fetch and curl -L of /download get the bytes; the client verifies them',
    async (wire) => {
      const server = await start(`plain-${wire}`, { wire });
      const dir = await tempDir('mission-curl-');
      try {
        const files = EVERY_KIND.map((name, index) => ({
          path: parseName(name).path,
          bytes: bytesFor(name, 3000 + index),
          // Half sent with Content-MD5 (confirmed from the bucket's HEAD), half without (read once, recorded).
          headers:
            index % 2 === 0
              ? { 'Content-MD5': hash('md5', bytesFor(name, 3000 + index)).toString('base64') }
              : {},
        }));
        for (const [index, { path, bytes, headers }] of files.entries()) {
          const name = EVERY_KIND[index] as string;
          const answer = await fetch(`${server.url}/upload/${name}`, { headers });
          expect(answer.status, name).toBe(200);
          const sent = (await answer.json()) as string | { body: string };
          const url = typeof sent === 'string' ? sent : sent.body;
          expect((await fetch(url, { method: 'PUT', body: bytes, headers })).status).toBe(200);

          const redirect = await fetch(`${server.url}/download/${path}`, { redirect: 'manual' });
          await redirect.arrayBuffer();
          expect(redirect.status, path).toBe(302);
          const location = new URL(redirect.headers.get('location') ?? '');
          // Nothing signed but the host: no header a client must send.
          expect(location.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
          expect(location.pathname).toBe(`/bucket/plain-${wire}/${path}`);
          // The object's checksum rides in the fragment: its MD5 (from the ETag, or recorded when it was read once),
          // the cheapest to check of those the service keeps.
          expect(location.hash).toMatch(/^#md5=[0-9a-f]{32}$/);
          const [algorithm, digest] = location.hash.slice(1).split('=') as [string, string];
          expect(digest).toBe(hash(algorithm, bytes).toString('hex'));

          const plain = await fetch(location);
          expect(plain.status).toBe(200);
          expect(Buffer.from(await plain.arrayBuffer()).equals(bytes)).toBe(true);
          const file = join(dir, `curl-${index}`);
          await promisify(execFile)('curl', ['-L', '-s', '-f', '-o', file, `${server.url}/download/${path}`]);
          expect((await readFile(file)).equals(bytes), `curl -L ${path}`).toBe(true);
        }

        const client = new HttpClient({ url: server.url, retries: 1, retryBaseMs: 5 });
        try {
          const dataDir = join(dir, 'data');
          const requests = requestSettings({ retries: 1, retryBaseMs: 5 });
          const paths = files.map((file) => file.path);
          const results = await downloadFiles(client, paths, { requests, dataDir, requireChecksum: true });
          expect(results.map((result) => [result.path, result.status, result.verified])).toEqual(
            paths.map((path) => [path, 'downloaded', true]),
          );
          for (const { path, bytes } of files) {
            expect((await readFile(join(dataDir, path))).equals(bytes)).toBe(true);
          }
        } finally {
          await client.close();
        }
      } finally {
        await server.close();
        await cleanup(dir);
      }
    },
  );
});

/**
 * A TCP relay to `port` that can freeze: once frozen, it takes new connections and never answers them, and the
 * bytes of open ones stop (a process that was stopped), without stopping anything shared.
 */
async function freezableRelay(port: number) {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    if (frozen) return;
    const upstream = connect(port, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => {
      frozen = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}

describe('a bucket or a database that stops answering', () => {
  it('/health answers 503 within the probe bound naming the bucket; the API answers 503 with Retry-After', async () => {
    const relay = await freezableRelay(Number(new URL(s3.endpoint).port));
    const server = await startReferenceServer({
      store: 's3://bucket/frozen',
      s3Endpoint: `http://127.0.0.1:${relay.port}`,
      s3Credentials: credentials(),
      wire: 'gateway',
    });
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      relay.freeze();
      const started = Date.now();
      const health = await fetch(`${server.url}/health`);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(health.status).toBe(503);
      const report = (await health.json()) as {
        store: { ok: boolean; problem: string };
        index: { ok: boolean };
      };
      expect(report.store).toMatchObject({
        ok: false,
        problem: 'The store s3://bucket/frozen did not answer within 3 s.',
      });
      expect(report.index.ok).toBe(true);
      const upload = await fetch(`${server.url}/upload/${scienceName('mag', 9)}`);
      expect(upload.status).toBe(503);
      expect(upload.headers.get('retry-after')).toBe('5');
      expect(await upload.text()).toMatch(
        /^Service unavailable: The store s3:\/\/bucket\/frozen did not answer within 3 s\./,
      );
    } finally {
      await server.close();
      await relay.close();
    }
  }, 40_000);

  it('a frozen database: /health names the index, /query answers 503 with Retry-After', async () => {
    const url = new URL(db.url);
    const relay = await freezableRelay(Number(url.port));
    url.port = String(relay.port);
    const server = await start('frozen-db', { indexUrl: url.toString() });
    try {
      expect((await fetch(`${server.url}/query?instrument=mag`)).status).toBe(200);
      relay.freeze();
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(503);
      const report = (await health.json()) as {
        store: { ok: boolean };
        index: { ok: boolean; problem: string };
      };
      expect(report.store.ok).toBe(true);
      expect(report.index.problem).toMatch(
        /^The index postgres:\/\/test:\*\*\*@127\.0\.0\.1:\d+\/test did not answer within 3 s\.$/,
      );
      const query = await fetch(`${server.url}/query?instrument=mag`);
      expect(query.status).toBe(503);
      expect(query.headers.get('retry-after')).toBe('5');
      expect(await query.text()).not.toContain(':test@');
    } finally {
      await relay.close();
      await server.close();
    }
  }, 40_000);

  it("a store's failure to list is named as the store's, with what to check", async () => {
    const fake = createHttpServer((req, res) => {
      if (req.method === 'HEAD') res.writeHead(200).end();
      else
        res
          .writeHead(500, { 'Content-Type': 'application/xml' })
          .end('<Error><Code>InternalError</Code></Error>');
    });
    await new Promise<void>((done) => fake.listen(0, '127.0.0.1', done));
    try {
      const started = startReferenceServer({
        store: 's3://bucket/listing',
        s3Endpoint: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
        s3Credentials: credentials(),
      });
      await expect(started).rejects.toMatchObject({
        code: 'E_STORE',
        message: expect.stringMatching(
          /^The store s3:\/\/bucket\/listing \(endpoint .*\) failed listing after 0 objects \(HTTP 500, InternalError\)\.$/,
        ),
        hint: expect.stringContaining('--openssl-legacy-provider'),
      });
    } finally {
      fake.closeAllConnections();
      await new Promise((done) => fake.close(done));
    }
  }, 60_000);
});
