/**
 * `readChunks`, which every reading of the verified record goes through: the complete lines from an offset to an
 * end, in order and whole however the reads cut them (a line longer than a read included), a line not ended yet
 * left for the next reading, and the offset after the last complete line.
 */
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChunks } from '../../src/data-root/verified-log.js';
import { makeTempDir } from '../server/helpers.js';

let folder: string;

beforeAll(async () => {
  folder = await makeTempDir('mission-verified-chunks-');
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Reads `text` (written to a file) from `from` to `to` with `readChunks`: the texts handed over, and the offset. */
async function read(text: string, from = 0, to = Buffer.byteLength(text)) {
  const file = join(folder, `log-${Math.random().toString(16).slice(2)}.jsonl`);
  await writeFile(file, text);
  const handle = await open(file, 'r');
  try {
    const texts: string[] = [];
    const offset = await readChunks(handle, from, to, (each) => {
      texts.push(each);
    });
    return { texts, offset };
  } finally {
    await handle.close();
  }
}

/** `count` lines of `length` characters each (the newline included), numbered. */
function lines(count: number, length: number): string {
  return Array.from({ length: count }, (_, i) => `${String(i).padEnd(length - 1, 'x')}\n`).join('');
}

describe('readChunks', () => {
  it.each([
    ['many short lines over several reads', lines(20_000, 61)],
    ['lines longer than a read', `a\n${'b'.repeat(700_000)}\nc\n${'d'.repeat(300_000)}\n`],
    ['a first line longer than two reads', `${'é'.repeat(300_000)}\nlast\n`],
  ])('hands over every complete line of %s, in order', async (_what, text) => {
    const { texts, offset } = await read(text);
    expect(texts.join('')).toBe(text);
    expect(texts.every((each) => each.endsWith('\n'))).toBe(true);
    expect(offset).toBe(Buffer.byteLength(text));
  });

  it('leaves a line not ended yet, and reads from an offset to an end', async () => {
    const text = `${lines(10_000, 70)}unfinished`;
    const whole = await read(text);
    expect(whole.texts.join('')).toBe(lines(10_000, 70));
    expect(whole.offset).toBe(10_000 * 70);
    const part = await read(text, 70 * 5_000, 70 * 9_000 + 10);
    expect(part.texts.join('')).toBe(lines(9_000, 70).slice(70 * 5_000));
    expect(part.offset).toBe(70 * 9_000);
  });

  it('reads nothing from an end at or before the offset', async () => {
    expect(await read('a\n', 2, 2)).toEqual({ texts: [], offset: 2 });
  });
});
