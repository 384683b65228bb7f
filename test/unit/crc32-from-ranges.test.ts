/**
 * A split download verified by CRC-32: each part's CRC-32 is taken as its bytes arrive and the parts' CRCs are
 * joined in order, so nothing this run received is read back; bytes it did not receive (a part an earlier run
 * left) are read back from the part file, and a damaged byte either way fails the check.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ExpectedChecksum } from '../../src/core/checksums/checksum.js';
import { CombinedCrc32 } from '../../src/core/checksums/crc32-from-ranges.js';
import { ChecksumMismatch } from '../../src/download/object/object-checksum.js';
import { receiveObject } from '../../src/download/object/receive.js';
import type { ObjectSource, ObjectState, RangedPlan } from '../../src/download/part/object-state.js';
import { PartFile } from '../../src/download/part/part-file.js';
import { readableBody } from '../../src/http/body.js';
import type { GetObjectOptions, ObjectResponse } from '../../src/http/objects.js';
import { pattern } from '../helpers/bytes.js';

const KIB = 1024;

function crcBytes(bytes: Buffer): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes));
  return out;
}

/** A part file as a buffer: `readBack` reads it, and records which ranges it was asked for. */
function disk(bytes: Buffer) {
  const read: Array<[number, number]> = [];
  return {
    bytes,
    read,
    readBack: (length: number, consume: (chunk: Buffer) => void, from: number) => {
      read.push([from, from + length]);
      // In small chunks, as the part file's reading back hands them over.
      for (let at = from; at < from + length; at += 1000)
        consume(bytes.subarray(at, Math.min(at + 1000, from + length)));
    },
  };
}

/** Feeds `bytes[from, to)` to a new feed of `checksum`, in chunks of odd sizes. */
function feed(checksum: CombinedCrc32, bytes: Buffer, from: number, to: number): void {
  const sink = checksum.feedFrom(from);
  for (let at = from, step = 1; at < to; at += step, step = (step * 7 + 3) % 4099) {
    sink.update(bytes.subarray(at, Math.min(to, at + step)));
  }
}

describe('CombinedCrc32', () => {
  const body = pattern(300_000, 3);
  const spans: Array<[number, number]> = [
    [0, 64 * KIB],
    [64 * KIB, 128 * KIB],
    [128 * KIB, 192 * KIB],
    [192 * KIB, 256 * KIB],
    [256 * KIB, 300_000],
  ];

  it('joins spans hashed out of order into the CRC-32 of the whole, reading nothing back', async () => {
    const part = disk(body);
    const checksum = new CombinedCrc32(part.readBack);
    for (const index of [3, 1, 4, 0, 2]) {
      const [from, to] = spans[index] as [number, number];
      feed(checksum, body, from, to);
    }
    // As the span book does: in order, once each span and every byte before it is in.
    for (const [, to] of spans) checksum.catchUp(to);
    expect(await checksum.digest()).toEqual(crcBytes(body));
    expect(part.read).toEqual([]);
  });

  it('joins a span as soon as it is in, with later spans hashed before the earlier ones finished', async () => {
    const part = disk(body);
    const checksum = new CombinedCrc32(part.readBack);
    feed(checksum, body, ...(spans[4] as [number, number]));
    feed(checksum, body, ...(spans[2] as [number, number]));
    feed(checksum, body, ...(spans[0] as [number, number]));
    checksum.catchUp(64 * KIB);
    feed(checksum, body, ...(spans[1] as [number, number]));
    checksum.catchUp(192 * KIB);
    feed(checksum, body, ...(spans[3] as [number, number]));
    checksum.catchUp(body.length);
    expect(await checksum.digest()).toEqual(crcBytes(body));
    expect(part.read).toEqual([]);
  });

  it('reads back only what an earlier run left: the start of the part and a finished span', async () => {
    const part = disk(body);
    // Resumed at byte 10,000 with the fourth span on disk: the receiving thread hashes the rest.
    const checksum = new CombinedCrc32(part.readBack);
    checksum.catchUp(10_000);
    feed(checksum, body, 10_000, 64 * KIB);
    feed(checksum, body, 64 * KIB, 128 * KIB);
    feed(checksum, body, 128 * KIB, 192 * KIB);
    feed(checksum, body, 256 * KIB, 300_000);
    for (const [, to] of spans) checksum.catchUp(to);
    expect(await checksum.digest()).toEqual(crcBytes(body));
    expect(part.read).toEqual([
      [0, 10_000],
      [192 * KIB, 256 * KIB],
    ]);
  });

  it('joins a span restarted mid-way from its two feeds, or reads back the bytes before the restart when only the restart was fed', async () => {
    const whole = disk(body);
    const restarted = new CombinedCrc32(whole.readBack);
    feed(restarted, body, 0, 64 * KIB);
    feed(restarted, body, 64 * KIB, 100_000);
    // The connection dropped at byte 100,000; the span resumed from there on another answer.
    feed(restarted, body, 100_000, 128 * KIB);
    for (const [from, to] of spans.slice(2)) feed(restarted, body, from, to);
    for (const [, to] of spans) restarted.catchUp(to);
    expect(await restarted.digest()).toEqual(crcBytes(body));
    expect(whole.read).toEqual([]);

    const part = disk(body);
    const unknownStart = new CombinedCrc32(part.readBack);
    feed(unknownStart, body, 0, 64 * KIB);
    feed(unknownStart, body, 100_000, 128 * KIB);
    for (const [from, to] of spans.slice(2)) feed(unknownStart, body, from, to);
    for (const [, to] of spans) unknownStart.catchUp(to);
    expect(await unknownStart.digest()).toEqual(crcBytes(body));
    expect(part.read).toEqual([[64 * KIB, 100_000]]);
  });

  it('catches a damaged byte on disk in a range read back, and a damaged byte received', async () => {
    const damaged = Buffer.from(body);
    damaged[200_000] = (damaged[200_000] ?? 0) ^ 0x01;
    // On disk, in the span an earlier run left: read back, and the CRC-32 no longer matches.
    const fromDisk = new CombinedCrc32(disk(damaged).readBack);
    for (const [from, to] of spans) if (from !== 192 * KIB) feed(fromDisk, body, from, to);
    for (const [, to] of spans) fromDisk.catchUp(to);
    expect(await fromDisk.digest()).not.toEqual(crcBytes(body));
    expect(await fromDisk.digest()).toEqual(crcBytes(damaged));
    // Received damaged: the CRC-32 is that of the bytes that came, whatever is read back elsewhere.
    const received = new CombinedCrc32(disk(body).readBack);
    for (const [from, to] of spans) feed(received, damaged, from, to);
    for (const [, to] of spans) received.catchUp(to);
    expect(await received.digest()).not.toEqual(crcBytes(body));
  });

  it('reads back what no single feed can say: overlapping feeds, a feed past the point asked for, an empty one', async () => {
    const part = disk(body);
    const checksum = new CombinedCrc32(part.readBack);
    // Every feed here brings other bytes than the disk holds: a digest of the disk's bytes shows none was used.
    const other = pattern(body.length, 9);
    // Two feeds over the same bytes, the later one starting inside the earlier: which is on disk is not known.
    feed(checksum, other, 0, 64 * KIB);
    feed(checksum, other, 32 * KIB, 96 * KIB);
    checksum.catchUp(64 * KIB);
    // The second one still reaches past the prefix, over a feed that starts where the prefix ends.
    feed(checksum, other, 64 * KIB, 128 * KIB);
    checksum.catchUp(128 * KIB);
    // A feed that runs past the end asked for cannot be cut there; an empty feed holds nothing.
    feed(checksum, other, 128 * KIB, 200_000);
    checksum.catchUp(160 * KIB);
    checksum.feedFrom(200_000);
    checksum.catchUp(body.length);
    expect(await checksum.digest()).toEqual(crcBytes(body));
    expect(part.read).toEqual([
      [0, 32 * KIB],
      [32 * KIB, 64 * KIB],
      [64 * KIB, 128 * KIB],
      [128 * KIB, 160 * KIB],
      [160 * KIB, 200_000],
      [200_000, body.length],
    ]);
  });
});

/** How the fake store misbehaves. */
interface StoreOptions {
  /** An answer that starts at this byte is cut after this many bytes (once). */
  cuts?: Map<number, number>;
  /** The byte at this offset is flipped in every answer that carries it. */
  flip?: number;
  /** The first answer waits this long before its first byte. */
  firstDelayMs?: number;
}

/** An object store of one object that states its CRC-32 on whole answers and serves ranges, in 10,000-byte chunks. */
function fakeStore(body: Buffer, options: StoreOptions = {}) {
  const etag = '"object-v1"';
  const requests: Array<{ start: number; end: number | undefined }> = [];
  /** Starts of the answers, in the order their last byte was sent. */
  const ended: number[] = [];
  const flip = options.flip;
  let answers = 0;
  const getObject = async (_url: string, request: GetObjectOptions = {}): Promise<ObjectResponse> => {
    const start = request.start ?? 0;
    const whole = start === 0 && request.end === undefined;
    requests.push({ start, end: request.end });
    if (request.ifMatch !== undefined && request.ifMatch !== etag) throw new Error('412');
    const last = request.end ?? body.length - 1;
    let slice = body.subarray(start, last + 1);
    if (flip !== undefined && flip >= start && flip <= last) {
      slice = Buffer.from(slice);
      slice[flip - start] = (slice[flip - start] ?? 0) ^ 0xff;
    }
    const cut = options.cuts?.get(start);
    options.cuts?.delete(start);
    const delay = answers === 0 ? (options.firstDelayMs ?? 0) : 0;
    answers += 1;
    const headers: Record<string, string> = {
      etag,
      'accept-ranges': 'bytes',
      'content-length': String(slice.length),
    };
    if (whole) headers['x-amz-checksum-crc32'] = crcBytes(body).toString('base64');
    else headers['content-range'] = `bytes ${start}-${last}/${body.length}`;
    const stream = new Readable({ read() {} });
    void (async () => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      const until = cut ?? slice.length;
      for (let at = 0; at < until && !stream.destroyed; at += 10_000) {
        stream.push(slice.subarray(at, Math.min(until, at + 10_000)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (stream.destroyed) return;
      if (cut === undefined) {
        ended.push(start);
        stream.push(null);
      } else setTimeout(() => stream.destroy(new Error('socket hang up')), 5);
    })();
    return { status: whole ? 200 : 206, headers, body: readableBody(stream) };
  };
  return { http: { getObject } satisfies ObjectSource, requests, ended };
}

describe('a split download verified by CRC-32', () => {
  const PART = 64 * KIB;
  const body = pattern(1024 * KIB + 123, 5);
  let dir: string;
  let part: PartFile;
  let readBack: Array<[number, number]>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'combined-crc32-'));
    part = await PartFile.claim(join(dir, 'file.cdf'));
    readBack = [];
    const original = part.readBack.bind(part);
    vi.spyOn(part, 'readBack').mockImplementation((length, consume, from = 0) => {
      readBack.push([from, from + length]);
      original(length, consume, from);
    });
    // The hashing thread reads the part through its descriptor: no thread may be started.
    vi.spyOn(part, 'descriptor', 'get').mockImplementation(() => {
      throw new Error('a thread was started to read the part back');
    });
  });

  afterEach(async () => {
    await part.discard();
    await rm(dir, { recursive: true, force: true });
  });

  const receive = (
    http: ObjectSource,
    state: ObjectState = { written: 0, total: undefined, etag: undefined },
    ranged: RangedPlan = { partSize: PART, connections: 3 },
  ) =>
    receiveObject({
      http,
      url: 'https://store.example/object?signature=secret',
      part,
      state,
      retryPolicy: { retries: 3, retryBaseMs: 1, maxRetryAfterMs: 10 },
      ranged,
    });

  /** Writes what an earlier run left: `ranges` of the body, with the state its record gives. */
  function leftBehind(written: number, finished: Array<[number, number]>): ObjectState {
    if (written > 0) part.write([body.subarray(0, written)], written, 0);
    for (const [from, to] of finished) part.write([body.subarray(from, to)], to - from, from);
    const expected: ExpectedChecksum = {
      algorithm: 'crc32',
      digest: crcBytes(body),
      source: 'x-amz-checksum-crc32',
    };
    return { written, total: body.length, etag: '"object-v1"', finished, expected };
  }

  const saved = async () => {
    await part.commit();
    return readFile(join(dir, 'file.cdf'));
  };

  it('verifies parts that land out of order without reading a byte back', async () => {
    const store = fakeStore(body, { firstDelayMs: 100 });
    const received = await receive(store.http);
    expect(received).toMatchObject({ size: body.length, transferred: body.length });
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    expect(store.requests.length).toBeGreaterThan(3);
    // The first part (the first answer's) was not the first to end.
    expect(store.ended[0]).not.toBe(0);
    expect(readBack).toEqual([]);
    expect((await saved()).equals(body)).toBe(true);
  });

  it('hashes each part apart when one answer carries on from part to part: nothing read back', async () => {
    // Measured from one connection, over a window that never ends: the first answer carries every part.
    const store = fakeStore(body);
    const received = await receive(store.http, undefined, {
      partSize: PART,
      connections: 1,
      adaptive: { max: 4, initial: 1, windowMs: 60_000 },
    });
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    expect(store.requests).toEqual([{ start: 0, end: undefined }]);
    expect(readBack).toEqual([]);
    expect((await saved()).equals(body)).toBe(true);
  });

  it('keeps the CRC-32 of a part cut mid-way, and of the first answer cut mid-way: nothing read back', async () => {
    // The first answer breaks off after 30,000 bytes, and the answer for the third part after 50,000.
    const store = fakeStore(body, {
      cuts: new Map([
        [0, 30_000],
        [2 * PART, 50_000],
      ]),
    });
    const received = await receive(store.http);
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    const starts = store.requests.map((request) => request.start);
    expect(starts).toContain(30_000);
    expect(starts).toContain(2 * PART + 50_000);
    expect(readBack).toEqual([]);
    expect((await saved()).equals(body)).toBe(true);
  });

  it('reads back only the bytes an earlier run left, and fetches the rest', async () => {
    const store = fakeStore(body);
    const state = leftBehind(40_000, [[5 * PART, 8 * PART]]);
    const received = await receive(store.http, state);
    expect(received).toMatchObject({ size: body.length, transferred: body.length - 40_000 - 3 * PART });
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    expect(readBack).toEqual([
      [0, 40_000],
      [5 * PART, 8 * PART],
    ]);
    expect((await saved()).equals(body)).toBe(true);
  });

  it('fails with ChecksumMismatch for a damaged byte on disk in the bytes an earlier run left', async () => {
    const store = fakeStore(body);
    const state = leftBehind(40_000, [[5 * PART, 8 * PART]]);
    part.write([Buffer.from([(body[6 * PART + 17] ?? 0) ^ 0x10])], 1, 6 * PART + 17);
    await expect(receive(store.http, state)).rejects.toBeInstanceOf(ChecksumMismatch);
  });

  it('fails with ChecksumMismatch for a byte damaged on the way, in a part or in the first answer', async () => {
    for (const flip of [7 * PART + 1234, 100]) {
      const store = fakeStore(body, { flip });
      await expect(receive(store.http)).rejects.toBeInstanceOf(ChecksumMismatch);
      expect(store.requests.length).toBeGreaterThan(3);
      expect(readBack).toEqual([]);
      part.truncate();
    }
  });
});
