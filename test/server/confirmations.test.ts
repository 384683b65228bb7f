/** The confirmation of uploads that went straight to a bucket, against a stand-in store and the in-memory index. */
import { describe, expect, it } from 'vitest';
import { parsePath } from '../../src/naming/names.js';
import { UploadConfirmer } from '../../src/server/confirmations.js';
import { MemoryIndex } from '../../src/server/metadata/memory-index.js';
import {
  type ConfirmsUploads,
  type ObjectStore,
  PutRejected,
  type PutResult,
} from '../../src/server/objects/object-store.js';

const KEY = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';

/** A store whose `confirm` does what the test says, and which records deletions. */
function standIn(confirm: () => Promise<PutResult | undefined>) {
  const deleted: string[] = [];
  const store = {
    confirm,
    delete: async (key: string) => {
      deleted.push(key);
      return true;
    },
  } as unknown as ObjectStore & ConfirmsUploads;
  return { store, deleted };
}

async function reserved(index: MemoryIndex, releaseInMs: number) {
  const now = Date.now();
  const reservation = await index.reserve(KEY, {
    urlExpiresAtMs: now + releaseInMs,
    releaseAtMs: now + releaseInMs,
  });
  if (!reservation) throw new Error('not reserved');
  return reservation;
}

describe('UploadConfirmer', () => {
  it('makes an arrived object visible', async () => {
    const index = new MemoryIndex();
    const object = { file: parsePath(KEY), size: 3, mtimeMs: Date.now(), md5: Buffer.alloc(16), crc32: 0 };
    const { store } = standIn(async () => object);
    await reserved(index, 60_000);
    expect(await new UploadConfirmer(store, index).settle()).toEqual({ confirmed: 1, released: 0 });
    expect(await index.has(KEY)).toBe(true);
    expect(await index.pending()).toEqual([]);
  });

  it('keeps waiting, deleting nothing, when reading the object fails (it may still be arriving)', async () => {
    const index = new MemoryIndex();
    const errors: unknown[] = [];
    const { store, deleted } = standIn(async () => {
      throw new Error('changed while it was read');
    });
    await reserved(index, 60_000);
    expect(await new UploadConfirmer(store, index, (error) => errors.push(error)).settle()).toEqual({
      confirmed: 0,
      released: 0,
    });
    expect(deleted).toEqual([]);
    expect(errors).toHaveLength(1);
    expect((await index.pending()).map((reservation) => reservation.key)).toEqual([KEY]);
  });

  it('removes bytes that are not what was signed, and frees the name', async () => {
    const index = new MemoryIndex();
    const { store, deleted } = standIn(async () => {
      throw new PutRejected(400, 'do not match the Content-MD5');
    });
    await reserved(index, 60_000);
    expect(await new UploadConfirmer(store, index).settle()).toEqual({ confirmed: 0, released: 1 });
    expect(deleted).toEqual([KEY]);
    expect(await index.pending()).toEqual([]);
  });

  it('releases a reservation whose object never came once its release time passed, not before', async () => {
    const index = new MemoryIndex();
    const { store } = standIn(async () => undefined);
    await reserved(index, 60_000);
    expect(await new UploadConfirmer(store, index).settle()).toEqual({ confirmed: 0, released: 0 });
    const late = new MemoryIndex();
    await reserved(late, -1);
    expect(await new UploadConfirmer(store, late).settle()).toEqual({ confirmed: 0, released: 1 });
  });

  it('callers during a pass share the one pass that follows it', async () => {
    const index = new MemoryIndex();
    let calls = 0;
    const { store } = standIn(async () => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return undefined;
    });
    await reserved(index, 60_000);
    const confirmer = new UploadConfirmer(store, index);
    await Promise.all([confirmer.settle(), confirmer.settle(), confirmer.settle(), confirmer.settle()]);
    expect(calls).toBe(2);
  });
});
