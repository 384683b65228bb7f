/** The confirmation of uploads that went straight to a bucket, against a stand-in store and the in-memory index. */
import { describe, expect, it } from 'vitest';
import { parsePath } from '../../src/naming/names.js';
import { UploadConfirmer } from '../../src/server/confirmations.js';
import { MemoryIndex } from '../../src/server/metadata/memory-index.js';
import type { IndexQuery } from '../../src/server/metadata/metadata-index.js';
import {
  type ConfirmsUploads,
  type ObjectStore,
  PutRejected,
  type PutResult,
} from '../../src/server/objects/object-store.js';
import { ObjectUnsettled } from '../../src/server/objects/unsettled.js';

/** What a `/query` does before it answers: one look at the index, then at the pending uploads it found. */
async function awaitMatching(confirmer: UploadConfirmer, filters: IndexQuery, waitMs?: number) {
  const asked = Date.now();
  const { pending } = await confirmer.index.queryWithPending(filters);
  return confirmer.awaitReservations(pending, asked, waitMs);
}

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

  it('waits for a later pass quietly when the object is still being written', async () => {
    const index = new MemoryIndex();
    const errors: unknown[] = [];
    const { store } = standIn(async () => {
      throw new ObjectUnsettled('The body is longer than its Content-Length of 0 bytes.');
    });
    await reserved(index, 60_000);
    const confirmer = new UploadConfirmer(store, index, (error) => errors.push(error));
    expect(await confirmer.settle()).toEqual({ confirmed: 0, released: 0 });
    expect(errors).toEqual([]);
    expect(await index.pending()).toHaveLength(1);
  });
});

/** Names of many uploads: `count` days of one instrument. */
function names(instrument: string, count: number): string[] {
  return Array.from(
    { length: count },
    (_, day) =>
      `imap/${instrument}/l1a/2025/01/imap_${instrument}_l1a_norm_202501${String(day + 1).padStart(2, '0')}_202501${String(day + 1).padStart(2, '0')}_v01-00.cdf`,
  );
}

/** A store on which every object has arrived; `confirm` takes `delayMs` and counts calls per key. */
function arrivedStore(delayMs: number) {
  const calls = new Map<string, number>();
  let running = 0;
  let most = 0;
  const store = {
    confirm: async (key: string) => {
      calls.set(key, (calls.get(key) ?? 0) + 1);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      running -= 1;
      return { file: parsePath(key), size: 1, mtimeMs: Date.now(), md5: Buffer.alloc(16), crc32: 0 };
    },
    delete: async () => true,
  } as unknown as ObjectStore & ConfirmsUploads;
  return { store, calls, most: () => most };
}

async function reserveAll(index: MemoryIndex, keys: readonly string[]) {
  const now = Date.now();
  for (const key of keys)
    await index.reserve(key, { urlExpiresAtMs: now + 60_000, releaseAtMs: now + 60_000 });
}

describe('UploadConfirmer: shared, parallel, bounded', () => {
  it('confirms a pass in parallel, at most 8 at once', async () => {
    const index = new MemoryIndex();
    const keys = names('mag', 24);
    await reserveAll(index, keys);
    const { store, most } = arrivedStore(40);
    const started = Date.now();
    expect(await new UploadConfirmer(store, index).settle()).toEqual({ confirmed: 24, released: 0 });
    expect(Date.now() - started).toBeLessThan(24 * 40);
    expect(most()).toBe(8);
  });

  it('two confirmers (two servers) on one index confirm each object once', async () => {
    const index = new MemoryIndex();
    const keys = names('mag', 20);
    await reserveAll(index, keys);
    const { store, calls } = arrivedStore(10);
    const a = new UploadConfirmer(store, index);
    const b = new UploadConfirmer(store, index);
    await Promise.all([
      a.settle(),
      b.settle(),
      awaitMatching(a, { table: 'science' }),
      index.reservation(keys[3] as string).then((held) => b.awaitReservations(held ? [held] : [])),
    ]);
    expect(await index.count()).toBe(20);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    expect(calls.size).toBe(20);
  });

  it('a query waits only for the pending uploads its filters select', async () => {
    const index = new MemoryIndex();
    const mag = names('mag', 5);
    await reserveAll(index, [...mag, ...names('swe', 5)]);
    const { store, calls } = arrivedStore(5);
    await awaitMatching(new UploadConfirmer(store, index), { table: 'science', instrument: 'mag' });
    expect([...calls.keys()].sort()).toEqual([...mag].sort());
    expect(await index.count()).toBe(5);
    const { store: other, calls: none } = arrivedStore(5);
    await awaitMatching(new UploadConfirmer(other, index), { table: 'ancillary' });
    expect(none.size).toBe(0);
  });

  it('a query waits no longer than its bound for an upload that takes long to confirm', async () => {
    const index = new MemoryIndex();
    await reserveAll(index, names('mag', 2));
    const { store } = arrivedStore(5_000);
    const confirmer = new UploadConfirmer(store, index);
    const started = Date.now();
    await awaitMatching(confirmer, { table: 'science' }, 200);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await index.count()).toBe(0);
  });

  it('waits for the outcome of a confirmation another server has claimed, rather than repeating it', async () => {
    const index = new MemoryIndex();
    const [key] = names('mag', 1) as [string];
    await reserveAll(index, [key]);
    const reservation = await index.reservation(key);
    if (!reservation) throw new Error('not reserved');
    const claim = await index.claim(reservation);
    const { store, calls } = arrivedStore(5);
    const waiting = new UploadConfirmer(store, index).awaitReservations([reservation], Date.now(), 2_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The other server confirms it.
    await index.confirm(reservation, { file: parsePath(key), size: 1, mtimeMs: Date.now() });
    if (claim) await index.unclaim(reservation, claim);
    await waiting;
    expect(calls.size).toBe(0);
    expect(await index.has(key)).toBe(true);
  });

  it('an upload signed with its MD5 is told by one look: not arrived, or confirmed without a claim or a read', async () => {
    const index = new MemoryIndex();
    const [arrived, coming] = names('mag', 2) as [string, string];
    const md5 = Buffer.alloc(16, 7);
    const now = Date.now();
    for (const key of [arrived, coming]) {
      await index.reserve(key, { urlExpiresAtMs: now + 60_000, releaseAtMs: now + 60_000, md5 });
    }
    const looks: string[] = [];
    let claims = 0;
    const claim = index.claim.bind(index);
    index.claim = async (...args) => {
      claims += 1;
      return claim(...args);
    };
    const store = {
      confirm: async () => {
        throw new Error('a full confirmation was not needed');
      },
      confirmFromHead: async (key: string, signed: Buffer) => {
        looks.push(key);
        if (key !== arrived) return 'absent' as const;
        return { file: parsePath(key), size: 1, mtimeMs: Date.now(), md5: signed };
      },
      delete: async () => true,
    } as unknown as ObjectStore & ConfirmsUploads;
    await awaitMatching(new UploadConfirmer(store, index), { table: 'science', instrument: 'mag' });
    expect(looks.sort()).toEqual([arrived, coming].sort());
    expect(claims).toBe(0);
    expect(await index.has(arrived)).toBe(true);
    expect(await index.has(coming)).toBe(false);
    expect((await index.pending()).map((reservation) => reservation.key)).toEqual([coming]);
  });

  it('a look begun before the request that found nothing is taken again: a PUT done before the request is seen', async () => {
    const index = new MemoryIndex();
    const [key] = names('mag', 1) as [string];
    const md5 = Buffer.alloc(16, 9);
    const now = Date.now();
    await index.reserve(key, { urlExpiresAtMs: now + 60_000, releaseAtMs: now + 60_000, md5 });
    let arrived = false;
    let looks = 0;
    const store = {
      confirm: async () => undefined,
      confirmFromHead: async (_key: string, signed: Buffer) => {
        looks += 1;
        const seen = arrived;
        await new Promise((resolve) => setTimeout(resolve, 100)); // a slow look, of the store as it was
        return seen
          ? { file: parsePath(key), size: 1, mtimeMs: Date.now(), md5: signed }
          : ('absent' as const);
      },
      delete: async () => true,
    } as unknown as ObjectStore & ConfirmsUploads;
    const confirmer = new UploadConfirmer(store, index);
    const early = awaitMatching(confirmer, { table: 'science', instrument: 'mag' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    arrived = true; // the PUT completes while the first look is under way
    await awaitMatching(confirmer, { table: 'science', instrument: 'mag' }); // asked after the PUT
    await early;
    expect(await index.has(key)).toBe(true);
    expect(looks).toBe(2);
  });

  it('tells an answer whether the index may have changed since its look: not when no upload it looked at had arrived', async () => {
    const index = new MemoryIndex();
    const [arrived, coming, other] = names('mag', 3) as [string, string, string];
    const md5 = Buffer.alloc(16, 5);
    const now = Date.now();
    for (const key of [arrived, coming, other]) {
      await index.reserve(key, { urlExpiresAtMs: now + 60_000, releaseAtMs: now + 60_000, md5 });
    }
    const store = {
      confirm: async () => undefined,
      confirmFromHead: async (key: string, signed: Buffer) =>
        key === coming
          ? ('absent' as const)
          : { file: parsePath(key), size: 1, mtimeMs: Date.now(), md5: signed },
      delete: async () => true,
    } as unknown as ObjectStore & ConfirmsUploads;
    const confirmer = new UploadConfirmer(store, index);
    const held = async (key: string) => {
      const reservation = await index.reservation(key);
      if (!reservation) throw new Error(`${key} is not reserved`);
      return reservation;
    };
    expect(await confirmer.awaitReservations([])).toBe(false);
    expect(await confirmer.awaitReservations([await held(coming)])).toBe(false);
    const [arrivedHeld, otherHeld] = [await held(arrived), await held(other)];
    expect(await confirmer.awaitReservations([await held(coming), arrivedHeld])).toBe(true);
    expect(await index.has(arrived)).toBe(true);
    // Arrived, and confirmed by another server since the look: its record is new to the answer.
    await index.confirm(otherHeld, { file: parsePath(other), size: 1, mtimeMs: Date.now() });
    expect(await confirmer.awaitReservations([otherHeld])).toBe(true);
  });
});
