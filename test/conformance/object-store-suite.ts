/**
 * Every promise of an ObjectStore, written once (in the manner of rclone's fstests) and run against each
 * implementation by `object-store.test.ts` on real backends. The tests of an optional capability (taking upload
 * bytes, confirming uploads that went straight to the store) run on the stores that have it and are skipped,
 * as such, on the others.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signsChecksumMode } from '../../src/http/objects.js';
import {
  confirmsUploads,
  type ObjectStore,
  PutRejected,
  takesUploads,
} from '../../src/server/objects/object-store.js';
import { HttpClient } from '../../src/service/client.js';

/** An implementation under test. */
export interface StoreFixture {
  store: ObjectStore;
  /** How uploads reach it: their bytes through the store (`takes`), or straight to it, then confirmed. */
  uploads: 'takes' | 'confirms';
  /** The base URL pre-signed URLs are made for (the server serving a folder store's URLs). */
  baseUrl: string;
  /** True when a PUT URL signed with a Content-MD5 refuses other bytes (the folder store's URLs do not sign it). */
  signsContentMd5: boolean;
  /** Makes the URLs of `presign` servable for what is stored now (a folder store's server reads its index). */
  serve(): Promise<void>;
  /** Puts bytes at a raw key by the store's own means, bypassing the interface (another tool's upload). */
  placeRaw(key: string, bytes: Buffer): Promise<void>;
  cleanup(): Promise<void>;
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest();
const key = (n: number, version = 'v01-00') =>
  `imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_202501${String(n).padStart(2, '0')}_202501${String(n).padStart(2, '0')}_${version}.cdf`;

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Runs the suite against the store `open` gives. */
export function objectStoreConformance(
  name: string,
  uploads: StoreFixture['uploads'],
  open: () => Promise<Omit<StoreFixture, 'uploads'>>,
): void {
  describe(`ObjectStore conformance: ${name}`, () => {
    let fixture: Omit<StoreFixture, 'uploads'>;
    let store: ObjectStore;
    const bytes = Buffer.from('0123456789abcdefghij'.repeat(50));

    beforeAll(async () => {
      fixture = await open();
      store = fixture.store;
      await store.check();
    });
    afterAll(async () => {
      await store?.close();
      await fixture?.cleanup();
    });

    it('offers one way for uploads to arrive, the one declared: it takes their bytes, or confirms them', () => {
      expect([takesUploads(store), confirmsUploads(store)].filter(Boolean)).toHaveLength(1);
      expect(takesUploads(store) ? 'takes' : 'confirms').toBe(uploads);
    });

    it('holds an object whole and reads it back: size, bytes and MD5', async () => {
      if (takesUploads(store)) {
        const stored = await store.put(key(1), Readable.from([bytes]), bytes.length, { md5: md5(bytes) });
        expect(stored.size).toBe(bytes.length);
        expect(stored.md5.equals(md5(bytes))).toBe(true);
      } else {
        await fixture.placeRaw(key(1), bytes);
      }
      expect(await store.occupied(key(1))).toBe(true);
      expect((await store.head(key(1)))?.size).toBe(bytes.length);
      const object = await store.open(key(1));
      expect(object?.size).toBe(bytes.length);
      expect((await object?.digests())?.md5.equals(md5(bytes))).toBe(true);
      expect(await readAll(object?.stream(0, bytes.length - 1) as Readable)).toEqual(bytes);
    });

    it('reads a byte range', async () => {
      const object = await store.open(key(1));
      expect((await readAll(object?.stream(3, 7) as Readable)).toString()).toBe('34567');
      await object?.close();
    });

    it.skipIf(uploads !== 'takes')(
      'refuses a second write of a name (409) and keeps the first bytes',
      async () => {
        if (!takesUploads(store)) throw new Error('the store takes no upload bytes');
        const other = Buffer.from('other bytes');
        await expect(store.put(key(1), Readable.from([other]), other.length)).rejects.toMatchObject({
          status: 409,
        });
        const object = await store.open(key(1));
        expect(object?.size).toBe(bytes.length);
        await object?.close();
      },
    );

    it.skipIf(uploads !== 'takes')('stores nothing when the body is shorter than its length', async () => {
      if (!takesUploads(store)) throw new Error('the store takes no upload bytes');
      await expect(store.put(key(2), Readable.from([Buffer.from('short')]), 100)).rejects.toBeDefined();
      expect(await store.head(key(2))).toBeUndefined();
    });

    it.skipIf(uploads !== 'takes')(
      'stores nothing when the bytes do not match the Content-MD5 (400)',
      async () => {
        if (!takesUploads(store)) throw new Error('the store takes no upload bytes');
        const wrong = md5(Buffer.from('something else'));
        await expect(
          store.put(key(3), Readable.from([bytes]), bytes.length, { md5: wrong }),
        ).rejects.toBeInstanceOf(PutRejected);
        expect(await store.head(key(3))).toBeUndefined();
      },
    );

    it.skipIf(uploads !== 'confirms')(
      'confirms an object that arrived by other means: size and checksums, checked against the expected MD5',
      async () => {
        if (!confirmsUploads(store)) throw new Error('the store confirms no uploads');
        const arrived = Buffer.from('bytes sent straight to the store');
        await fixture.placeRaw(key(4), arrived);
        const confirmed = await store.confirm(key(4), { md5: md5(arrived) });
        expect(confirmed?.size).toBe(arrived.length);
        expect(confirmed?.md5.equals(md5(arrived))).toBe(true);
        // Recorded once: a second confirmation finds the same checksums.
        expect((await store.confirm(key(4)))?.md5.equals(md5(arrived))).toBe(true);
        await expect(store.confirm(key(4), { md5: md5(bytes) })).rejects.toMatchObject({ status: 400 });
        expect(await store.confirm(key(5))).toBeUndefined();
      },
    );

    it('lists by prefix, and names the keys that break the naming rules', async () => {
      if (!(await store.head(key(4)))) await fixture.placeRaw(key(4), Buffer.from('placed by another tool'));
      await fixture.placeRaw('imap/mag/l1a/2025/01/not-a-mission-file.txt', Buffer.from('x'));
      const skipped: string[] = [];
      const all = await store.list('', (found) => skipped.push(found));
      expect(all.map((object) => object.file.path).sort()).toEqual([key(1), key(4)]);
      expect(skipped).toContain('imap/mag/l1a/2025/01/not-a-mission-file.txt');
      expect((await store.list(key(4))).map((object) => object.file.path)).toEqual([key(4)]);
      expect(await store.list('imap/swe/')).toEqual([]);
    });

    it('pre-signs a GET that serves the bytes to a plain GET (no header of its own), and refuses it tampered or expired', async () => {
      await fixture.serve();
      const url = await store.presign('GET', key(1), { baseUrl: fixture.baseUrl });
      // A download URL works for every HTTP client (curl -L, a browser): it signs no header a client must send.
      expect(signsChecksumMode(new URL(url))).toBe(false);
      const got = await fetch(url);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
      const ranged = await fetch(url, { headers: { Range: 'bytes=0-3' } });
      expect(ranged.status).toBe(206);
      expect(await ranged.text()).toBe('0123');
      const tampered = await fetch(url.replace('v01-00.cdf', 'v01-01.cdf'));
      expect(tampered.status).toBe(403);
      const short = await store.presign('GET', key(1), { baseUrl: fixture.baseUrl, lifetimeSeconds: 1 });
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect((await fetch(short)).status).toBe(403);
    });

    // The S3 store once signed x-amz-checksum-mode into its GETs (S3 states stored checksums only then), which
    // made every client that simply follows the redirect get 403; the checksums now come with /download.
    it.runIf(uploads === 'confirms')(
      'signs only the host into a GET, and the client reads it with no x-amz-* header',
      async () => {
        await fixture.serve();
        const url = new URL(await store.presign('GET', key(1), { baseUrl: fixture.baseUrl }));
        expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
        const client = new HttpClient({ url: 'http://127.0.0.1:9', retries: 0 });
        try {
          const answer = await client.getObject(url.href, { start: 0, end: 3 });
          expect(answer.status).toBe(206);
          expect(await answer.body.bytes(1024, () => undefined)).toEqual(Buffer.from('0123'));
        } finally {
          await client.close();
        }
      },
    );

    it('pre-signs a PUT that stores the bytes; with a signed Content-MD5 other bytes are refused', async () => {
      const sent = Buffer.from('uploaded through a signed URL');
      const url = await store.presign('PUT', key(6), { baseUrl: fixture.baseUrl });
      const put = await fetch(url, { method: 'PUT', body: sent });
      expect(put.status).toBe(200);
      expect((await store.head(key(6)))?.size).toBe(sent.length);
      if (!fixture.signsContentMd5) return;
      const contentMd5 = md5(sent).toString('base64');
      const signed = await store.presign('PUT', key(7), { baseUrl: fixture.baseUrl, contentMd5 });
      const refused = await fetch(signed, {
        method: 'PUT',
        body: Buffer.from('other bytes, same length!!!!!'),
        headers: { 'Content-MD5': md5(Buffer.from('other bytes, same length!!!!!')).toString('base64') },
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(await store.head(key(7))).toBeUndefined();
      const accepted = await fetch(signed, {
        method: 'PUT',
        body: sent,
        headers: { 'Content-MD5': contentMd5 },
      });
      expect(accepted.status).toBe(200);
    });

    it('deletes an object once', async () => {
      expect(await store.delete(key(6))).toBe(true);
      expect(await store.delete(key(6))).toBe(false);
      expect(await store.head(key(6))).toBeUndefined();
      expect(await store.occupied(key(6))).toBe(false);
    });
  });
}
