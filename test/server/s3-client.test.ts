/**
 * The client against a real S3-compatible store (s3rver, which checks SigV4 signatures), with URLs signed by
 * the AWS SDK's presigner: its errors read as the store's Code and Message, an expired URL is asked for again
 * and the download completes verified, and an upload PUT goes through on a pre-signed URL.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { ApiError } from '../../src/core/errors.js';
import { downloadFiles } from '../../src/download/engine.js';
import { HttpClient } from '../../src/service/client.js';
import { startS3Store } from '../helpers/backends.js';
import { bytesFor, scienceName } from '../helpers/e2e.js';
import { bytesUpload } from '../helpers/uploads.js';

/** Retries as the client's, with backoff short enough for a test. */
const REQUESTS = requestSettings({ retries: 1, retryBaseMs: 5 });

type S3Store = Awaited<ReturnType<typeof startS3Store>>;

const BUCKET = 'archive';
const PATH = `imap/mag/l1a/2024/01/${scienceName('mag', 3)}`;
const CONTENT = bytesFor('s3rver', 200_000);

describe('the client against s3rver (SigV4)', () => {
  let store: S3Store;
  let s3: S3Client;
  let http: HttpClient;
  let dataDir: string;

  const sign = (options: { expiresIn: number; signingDate?: Date }) =>
    getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: PATH }), options);

  beforeAll(async () => {
    store = await startS3Store();
    s3 = new S3Client({
      endpoint: store.endpoint,
      region: store.region,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    });
    await store.createBucket(BUCKET);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: PATH, Body: CONTENT }));
    http = new HttpClient({ url: 'http://127.0.0.1:9', retries: 1, retryBaseMs: 5 });
    dataDir = await mkdtemp(join(tmpdir(), 'mission-s3-'));
  });
  afterAll(async () => {
    await http?.close();
    s3?.destroy();
    await store?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('an expired URL: the error shows "403 AccessDenied: Request has expired"', async () => {
    const expired = await sign({ expiresIn: 1, signingDate: new Date(Date.now() - 60_000) });
    const error = await http.getObject(expired).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/: 403 AccessDenied: Request has expired$/);
    expect((error as ApiError).storeCode).toBe('AccessDenied');
    // The credential in the query string never reaches a message.
    expect((error as ApiError).message).not.toMatch(/X-Amz-Signature/);
  });

  it('a tampered URL: the error shows "403 SignatureDoesNotMatch"', async () => {
    const url = new URL(await sign({ expiresIn: 60 }));
    url.searchParams.set('X-Amz-Expires', '61');
    const error = await http.getObject(url.href).catch((caught: unknown) => caught);
    expect((error as ApiError).message).toMatch(/403 SignatureDoesNotMatch/);
  });

  it('a download whose URL expired asks the service for a new one once and completes, verified', async () => {
    let asked = 0;
    const service = {
      resolveDownload: async () => {
        asked += 1;
        // The first URL the service hands out is already expired (a look-up that waited too long).
        return asked === 1
          ? sign({ expiresIn: 1, signingDate: new Date(Date.now() - 60_000) })
          : sign({ expiresIn: 60 });
      },
      getObject: (url: string, options?: Parameters<HttpClient['getObject']>[1]) =>
        http.getObject(url, options),
    };
    const [result] = await downloadFiles(service, [PATH], { requests: REQUESTS, dataDir });
    expect(result?.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'downloaded', verified: true });
    expect(asked).toBe(2);
    expect((await readFile(join(dataDir, PATH))).equals(CONTENT)).toBe(true);
  });

  it('an upload PUT to a pre-signed URL is accepted (only signed headers are sent)', async () => {
    const key = 'uploads/put.bin';
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: key }), { expiresIn: 60 });
    const body = bytesFor('put', 10_000);
    const answer = await http.putObject(url, bytesUpload(body));
    expect(answer.etag).toBeDefined();
    const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(body)).toBe(true);
  });
});
