/**
 * `pump` always settles: a body ended or destroyed before it was handed over (an abort between the answer and
 * the copy), a signal already aborted, a body cut short, and a body that runs to its end.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortedError } from '../../src/core/errors.js';
import { PartFile } from '../../src/download/part/part-file.js';
import { pump } from '../../src/download/part/pump.js';
import { type AnswerBody, readableBody } from '../../src/http/body.js';

let dir: string;
let part: PartFile;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pump-'));
  part = await PartFile.claim(join(dir, 'file.cdf'));
});

afterEach(async () => {
  await part.discard();
  await rm(dir, { recursive: true, force: true });
});

const noReport = () => undefined;

describe('pump', () => {
  it('writes a body to its end and reports the position', async () => {
    const written: number[] = [];
    const outcome = await pump({
      body: readableBody(Readable.from([Buffer.from('hello '), Buffer.from('world')])),
      part,
      from: 0,
      total: 11,
      report: noReport,
      written: (position) => written.push(position),
    });
    expect(outcome).toEqual({ position: 11 });
    expect(written.at(-1)).toBe(11);
    await part.commit();
    expect(await readFile(join(dir, 'file.cdf'), 'utf8')).toBe('hello world');
  });

  it('settles for a body destroyed before it was handed over', async () => {
    const body = new PassThrough();
    body.write('abc');
    body.on('error', () => undefined); // as undici's body is heard by its owner
    body.destroy(new Error('aborted earlier'));
    await new Promise((resolve) => setImmediate(resolve)); // its 'error' and 'close' are already emitted
    const outcome = await pump({ body: readableBody(body), part, from: 0, report: noReport });
    expect(outcome.position).toBe(0);
    expect(String(outcome.error)).toContain('aborted earlier');
  });

  it('settles for a body that ended before it was handed over', async () => {
    const body = new PassThrough();
    body.end();
    body.resume();
    await new Promise((resolve) => setImmediate(resolve));
    const outcome = await pump({ body: readableBody(body), part, from: 0, report: noReport });
    expect(outcome.position).toBe(0);
  });

  it('settles at once, with an AbortedError, when the signal aborted before the call', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const body = new PassThrough(); // never ends by itself
    const outcome = await pump({
      body: readableBody(body),
      part,
      from: 0,
      report: noReport,
      signal: controller.signal,
    });
    expect(outcome.error).toBeInstanceOf(AbortedError);
    expect(body.destroyed).toBe(true);
  });

  it('keeps the bytes of a body cut short and returns why it ended', async () => {
    const body = new PassThrough();
    const settled = pump({ body: readableBody(body), part, from: 0, total: 100, report: noReport });
    body.write(Buffer.alloc(40, 1));
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy(new Error('reset'));
    const outcome = await settled;
    expect(outcome.position).toBe(40);
    expect(String(outcome.error)).toContain('reset');
  });

  it('a lent body (one buffer read into again and again) lands whole, small chunks gathered, large ones as they come', async () => {
    const sizes = [16 * 1024, 16 * 1024, 300 * 1024, 5, 16 * 1024, 1024 * 1024, 700 * 1024, 1];
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const expected = Buffer.alloc(total);
    for (let i = 0; i < total; i += 1) expected[i] = (i * 7 + (i >> 11)) % 256;
    const shared = Buffer.alloc(1024 * 1024);
    const body: AnswerBody = {
      async consume(onChunk) {
        let at = 0;
        for (const size of sizes) {
          expected.copy(shared, 0, at, at + size);
          onChunk(shared.subarray(0, size));
          // The connection reads its next bytes into the same memory.
          shared.fill(0xee);
          at += size;
          await new Promise((resolve) => setImmediate(resolve));
        }
        return undefined;
      },
      destroy: () => undefined,
      dump: async () => undefined,
      bytes: async () => Buffer.alloc(0),
    };
    const written: number[] = [];
    const outcome = await pump({
      body,
      part,
      from: 0,
      total,
      report: noReport,
      written: (at) => written.push(at),
    });
    expect(outcome).toEqual({ position: total });
    // Three writes gathered small chunks, two wrote large ones as they came: not one per chunk.
    expect(written.length).toBeLessThan(sizes.length);
    await part.commit();
    expect((await readFile(join(dir, 'file.cdf'))).equals(expected)).toBe(true);
  });

  it('pauses a lent body while the part file is behind: after a slow write, and only then, until the loop turned', async () => {
    const chunks = [0, 1, 2, 3].map((n) => Buffer.alloc(512 * 1024, n));
    const answers: unknown[] = [];
    let slow = false;
    const write = part.write.bind(part);
    part.write = (buffers, size, position) => {
      const until = performance.now() + (slow ? 20 : 0);
      while (performance.now() < until);
      write(buffers, size, position);
    };
    // A lent body (as the wire client's): hands each chunk over and keeps what the taker answers.
    const body: AnswerBody = {
      async consume(onChunk) {
        for (const [n, chunk] of chunks.entries()) {
          slow = n === 2;
          answers.push(onChunk(chunk));
          await answers.at(-1);
        }
        return undefined;
      },
      destroy: () => undefined,
      dump: async () => undefined,
      bytes: async () => Buffer.alloc(0),
    };
    const outcome = await pump({ body, part, from: 0, total: 2 * 1024 * 1024, report: noReport });
    expect(outcome).toEqual({ position: 2 * 1024 * 1024 });
    expect(answers.map((answer) => answer instanceof Promise)).toEqual([false, false, true, false]);
  });
});
