/** The ObjectStore conformance suite on each implementation: the folder store and the S3 store (s3rver). */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startReferenceServer } from '../../src/server/index.js';
import { FolderStore } from '../../src/server/objects/folder-store.js';
import { S3Store } from '../../src/server/objects/s3-store.js';
import { startS3Store } from '../helpers/backends.js';
import { objectStoreConformance, type StoreFixture } from './object-store-suite.js';

objectStoreConformance('folder store', 'takes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'conformance-folder-'));
  const secret = 'conformance-secret-0123456789';
  const store = await FolderStore.open(dir, { secret });
  // The folder store's URLs are served by the reference server on the same folder and secret.
  let server = await startReferenceServer({ store: dir, secret });
  const fixture: Omit<StoreFixture, 'uploads'> = {
    store,
    baseUrl: server.url,
    signsContentMd5: false,
    async serve() {
      await server.close();
      server = await startReferenceServer({ store: dir, secret, port: server.port });
    },
    async placeRaw(key, bytes) {
      await mkdir(dirname(join(dir, key)), { recursive: true });
      await writeFile(join(dir, key), bytes);
    },
    async cleanup() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fixture;
});

objectStoreConformance('S3 store (s3rver, SigV4 checked)', 'confirms', async () => {
  const s3rver = await startS3Store();
  await s3rver.createBucket('conformance');
  const credentials = { accessKeyId: s3rver.accessKeyId, secretAccessKey: s3rver.secretAccessKey };
  const store = new S3Store({ url: 's3://conformance/some/prefix', endpoint: s3rver.endpoint, credentials });
  const raw = new S3Client({
    endpoint: s3rver.endpoint,
    region: s3rver.region,
    forcePathStyle: true,
    credentials,
  });
  return {
    store,
    baseUrl: 'http://unused.invalid',
    signsContentMd5: true,
    serve: async () => undefined,
    async placeRaw(key, bytes) {
      await raw.send(new PutObjectCommand({ Bucket: 'conformance', Key: `some/prefix/${key}`, Body: bytes }));
    },
    async cleanup() {
      raw.destroy();
      await s3rver.stop();
    },
  };
});
