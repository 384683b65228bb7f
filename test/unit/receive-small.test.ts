/**
 * A small whole object (at most 256 KiB, a 200 to a part with nothing on disk) is taken without the pump: one
 * read written where it landed, several gathered and written once. These tests hold it to what the pump does for
 * a larger one: every byte checked, a body cut short resumed from the bytes on disk, an abort keeping them, a
 * body longer than announced or a failed write refused.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortedError } from '../../src/core/errors.js';
import { receiveObject } from '../../src/download/object/receive.js';
import type { ObjectSource, ObjectState } from '../../src/download/part/object-state.js';
import { PartFile } from '../../src/download/part/part-file.js';
import { readableBody } from '../../src/http/body.js';
import type { GetObjectOptions, ObjectResponse } from '../../src/http/objects.js';
import { pattern } from '../helpers/bytes.js';

const ETAG = '"small-v1"';

function crcOf(bytes: Buffer): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes) >>> 0);
  return out.toString('base64');
}

interface Answer {
  /** The reads the body comes in (views of the object from the asked start); all of it in one when absent. */
  chunks?: number;
  /** Send only this many bytes of the answer, then end it with an error (or hang, with `hang`). */
  cut?: number;
  hang?: boolean;
  /** Bytes sent after the announced length. */
  extra?: number;
  /** Flip this byte of the object. */
  flip?: number;
}

/** A store serving `body`, each answer as `answers` says in turn (whole and right once they run out). */
function fakeStore(body: Buffer, answers: Answer[] = []) {
  const requests: Array<{ start: number; ifMatch: string | undefined }> = [];
  const getObject = async (_url: string, request: GetObjectOptions = {}): Promise<ObjectResponse> => {
    const start = request.start ?? 0;
    requests.push({ start, ifMatch: request.ifMatch });
    const how = answers.shift() ?? {};
    let slice = body.subarray(start);
    if (how.flip !== undefined) {
      slice = Buffer.from(slice);
      slice[how.flip - start] = (slice[how.flip - start] ?? 0) ^ 0xff;
    }
    const headers: Record<string, string> = { etag: ETAG, 'content-length': String(slice.length) };
    if (start === 0) headers['x-amz-checksum-crc32'] = crcOf(body);
    else headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    const sent = how.extra ? Buffer.concat([slice, Buffer.alloc(how.extra, 7)]) : slice;
    const until = how.cut ?? sent.length;
    const step = Math.ceil(sent.length / (how.chunks ?? 1));
    const stream = new Readable({ read() {} });
    void (async () => {
      for (let at = 0; at < until && !stream.destroyed; at += step) {
        stream.push(sent.subarray(at, Math.min(until, at + step)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (stream.destroyed || how.hang) return;
      if (how.cut === undefined) stream.push(null);
      else stream.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    })();
    return { status: start === 0 ? 200 : 206, headers, body: readableBody(stream) };
  };
  return { http: { getObject } satisfies ObjectSource, requests };
}

describe('a small object, taken without the pump', () => {
  let dir: string;
  let part: PartFile;
  let state: ObjectState;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'receive-small-'));
    part = await PartFile.claim(join(dir, 'file.cdf'));
    state = { written: 0, total: undefined, etag: undefined };
  });

  afterEach(async () => {
    await part.discard();
    await rm(dir, { recursive: true, force: true });
  });

  const receive = (
    http: ObjectSource,
    options: { signal?: AbortSignal; onBytes?: (n: number) => void } = {},
  ) =>
    receiveObject({
      http,
      url: 'https://store.example/object?signature=secret',
      part,
      state,
      signal: options.signal,
      onBytes: options.onBytes,
      retryPolicy: { retries: 3, retryBaseMs: 1, maxRetryAfterMs: 10 },
      ranged: { partSize: 64 * 1024, connections: 1 },
    });

  const onDisk = () => readFile(part.path);

  it('writes a body that comes in one read, checks it and reports its size once', async () => {
    const body = pattern(1024, 1);
    const store = fakeStore(body);
    const reported: number[] = [];
    const received = await receive(store.http, { onBytes: (n) => reported.push(n) });
    expect(received).toMatchObject({ size: 1024, transferred: 1024 });
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    expect(await onDisk()).toEqual(body);
    expect(reported).toEqual([1024]);
  });

  it('gathers a body that comes in several reads and writes it whole, an empty one too', async () => {
    const body = pattern(200 * 1024 + 7, 2);
    const received = await receive(fakeStore(body, [{ chunks: 17 }]).http);
    expect(received).toMatchObject({ size: body.length, transferred: body.length });
    expect(await onDisk()).toEqual(body);
    part.truncate();
    state = { written: 0, total: undefined, etag: undefined };
    const empty = await receive(fakeStore(Buffer.alloc(0)).http);
    expect(empty).toMatchObject({ size: 0, transferred: 0 });
    expect(await onDisk()).toEqual(Buffer.alloc(0));
  });

  it('resumes a body cut short from the bytes on disk, fetching none twice, and still checks every byte', async () => {
    const body = pattern(100_000, 3);
    const store = fakeStore(body, [{ chunks: 10, cut: 30_000 }]);
    const received = await receive(store.http);
    expect(store.requests).toEqual([
      { start: 0, ifMatch: undefined },
      { start: 30_000, ifMatch: ETAG },
    ]);
    expect(received).toMatchObject({ size: body.length, transferred: body.length });
    expect(received.verifiedBy?.algorithm).toBe('crc32');
    expect(await onDisk()).toEqual(body);
  });

  it('refuses one damaged byte, in one read or in several', async () => {
    for (const chunks of [1, 5]) {
      const body = pattern(50_000, 4);
      await expect(receive(fakeStore(body, [{ chunks, flip: 25_000 }]).http)).rejects.toMatchObject({
        code: 'E_CHECKSUM',
      });
      part.truncate();
      state = { written: 0, total: undefined, etag: undefined };
    }
  });

  it('refuses a body that runs past its announced length, writing none of it', async () => {
    for (const chunks of [1, 4]) {
      const body = pattern(40_000, 5);
      await expect(receive(fakeStore(body, [{ chunks, extra: 10 }]).http)).rejects.toThrow(
        'The server sent more than the announced 40000 bytes.',
      );
      expect(state.written).toBe(0);
    }
  });

  it('on abort, keeps the bytes that came on disk for the next run', async () => {
    const body = pattern(100_000, 6);
    const store = fakeStore(body, [{ chunks: 10, cut: 20_000, hang: true }]);
    const controller = new AbortController();
    const receiving = receive(store.http, { signal: controller.signal });
    const deadline = Date.now() + 5_000;
    while (store.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error('Interrupted by SIGINT'));
    await expect(receiving).rejects.toBeInstanceOf(AbortedError);
    expect(state.written).toBe(20_000);
    expect(await onDisk()).toEqual(body.subarray(0, 20_000));
  });

  it('fails when the part cannot be written, for a body in one read or in several', async () => {
    for (const chunks of [1, 3]) {
      const write = vi.spyOn(part, 'write').mockImplementation(() => {
        throw Object.assign(new Error('Cannot write the part: no space left on device'), { code: 'ENOSPC' });
      });
      await expect(receive(fakeStore(pattern(30_000, 7), [{ chunks }]).http)).rejects.toThrow(
        'no space left on device',
      );
      expect(state.written).toBe(0);
      write.mockRestore();
    }
  });
});
