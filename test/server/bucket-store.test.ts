/**
 * The reference server on a bucket (s3rver) with the in-memory or PostgreSQL index, in-process: reservations
 * released after the URL's life, a signed Content-MD5, `/health`, reindexing objects put by other tools, HTTPS.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { cleanup, scienceName, tempDir, waitFor } from '../helpers/e2e.js';
import { startPostgres, startS3Store } from '../helpers/engines.js';

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

function start(prefix: string, options: Partial<Parameters<typeof startReferenceServer>[0]> = {}) {
  return startReferenceServer({
    storeDir: `s3://bucket/${prefix}`,
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
      const query = async () =>
        ((await (await fetch(`${server.url}/query?instrument=mag`)).json()) as { file_path: string }[]).map(
          (r) => r.file_path,
        );
      expect(await query()).not.toContain(path(good));
      const report = await server.reindex();
      expect(report).toMatchObject({ added: 1, skipped: ['imap/mag/readme.txt'] });
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
      await promisify(execFile)('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ]);
      const [cert, key] = await Promise.all([
        readFile(join(dir, 'cert.pem')),
        readFile(join(dir, 'key.pem')),
      ]);
      server = await startReferenceServer({ storeDir: join(dir, 'store'), tls: { cert, key } });
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
