/**
 * Results written a piece at a time (`src/cli/results-out.ts`): the text is that of the whole at once, byte for
 * byte, in several writes when there are many; each write waits while stdout's buffer is full, not once the run is
 * cancelled; a stdout that failed takes nothing more.
 */
import { PassThrough, type Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { JsonArrayPieces, linePieces, writeResults } from '../../src/cli/results-out.js';
import { Sink } from '../helpers/sink.js';

function ioWith(stdout: Writable, signal = new AbortController().signal): CommandIO {
  return { stdout, stderr: new PassThrough(), stdin: new PassThrough(), signal };
}

/** Results with what JSON must keep: nesting, null, non-ASCII text, characters it escapes. */
const results = (count: number) =>
  Array.from({ length: count }, (_, at) => ({
    at,
    name: `file ${at} ünï "q"\n`,
    none: null,
    tags: [at, {}],
  }));

describe('JsonArrayPieces', () => {
  it.each([0, 1, 200, 201, 450])(
    '%d results: the whole array as JSON.stringify writes it, byte for byte',
    (count) => {
      const all = results(count);
      const mapped = (result: (typeof all)[number]) => ({ path: result.name, index: result.at });
      const json = new JsonArrayPieces(mapped);
      const half = Math.floor(count / 2);
      // Handed over in two pages, as a query's come.
      const text = [...json.page(all.slice(0, half)), ...json.page(all.slice(half)), json.end()].join('');
      expect(text).toBe(`${JSON.stringify(all.map(mapped), null, 2)}\n`);
      expect(json.count).toBe(count);
    },
  );

  it('makes many results into several pieces, none over a few hundred results', () => {
    const pieces = [...new JsonArrayPieces().page(results(1000))];
    expect(pieces.length).toBeGreaterThanOrEqual(5);
    for (const piece of pieces) expect(piece.split('"at"').length - 1).toBeLessThanOrEqual(200);
  });
});

describe('linePieces', () => {
  it('joins the lines of every result, in order, in pieces', () => {
    const all = results(450);
    const line = (result: (typeof all)[number]) => `ok ${result.at}\n`;
    const pieces = [...linePieces(all, line)];
    expect(pieces.join('')).toBe(all.map(line).join(''));
    expect(pieces.length).toBe(3);
    expect([...linePieces([], line)]).toEqual([]);
  });
});

describe('writeResults', () => {
  it('waits while stdout is full, then writes the rest in order', async () => {
    const stdout = new Sink(1024);
    stdout.held = [];
    const pieces = [...linePieces(results(1000), (result) => `ok ${result.name}`)];
    let settled = false;
    const writing = writeResults(ioWith(stdout), pieces).then((taken) => {
      settled = true;
      return taken;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first piece fills the buffer: nothing more is handed over while the reader does not read.
    expect(settled).toBe(false);
    expect(stdout.chunks).toHaveLength(1);
    stdout.release();
    expect(await writing).toBe(true);
    expect(stdout.text()).toBe(pieces.join(''));
  });

  it('no longer waits once the run is cancelled', async () => {
    const stdout = new Sink(1024);
    stdout.held = [];
    const cancel = new AbortController();
    cancel.abort();
    const pieces = [...linePieces(results(1000), (result) => `ok ${result.name}`)];
    expect(await writeResults(ioWith(stdout, cancel.signal), pieces)).toBe(true);
    stdout.release();
    expect(stdout.text()).toBe(pieces.join(''));
  });

  it('stops when stdout fails (the reader left), and says so', async () => {
    const stdout = new Sink(1024);
    stdout.held = [];
    const pieces = [...linePieces(results(1000), (result) => `ok ${result.name}`)];
    const writing = writeResults(ioWith(stdout), pieces);
    await new Promise((resolve) => setTimeout(resolve, 20));
    stdout.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await writing).toBe(false);
    expect(stdout.chunks.length).toBeLessThan(pieces.length);
  });
});
