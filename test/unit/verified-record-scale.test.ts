/**
 * The verified record as a data root grows: repeated `verify` passes leave it one line a file (a writer compacts
 * the log it grew), a compaction keeps every line other writers append before, during and after it, and a run
 * that asks about some files parses only their lines, holding exactly what a full read holds of them.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DataRoot, type VerifiedEntry } from '../../src/data-root/index.js';
import { STATE_FOLDER } from '../../src/data-root/state-folder.js';
import { acquireLock } from '../../src/data-root/sync-lock.js';
import { VerifiedRecord } from '../../src/data-root/verified.js';

/** Files of the record: enough that two lines a file pass the size below which a log is never compacted. */
const FILES = 6_000;
const pathOf = (index: number) =>
  `imap/mag/l1b/2024/${String(1 + (index % 12)).padStart(2, '0')}/imap_mag_l1b_norm-${index}_20240101_v01-00.cdf`;
const lineOf = (index: number, at: number): VerifiedEntry => ({
  p: pathOf(index),
  size: index,
  mtimeMs: 1_700_000_000_000 + index,
  ino: 1_000 + index,
  sum: `md5:${index.toString(16).padStart(32, '0')}`,
  at,
});
/** A file another writer records (not among the FILES). */
const extra = (index: number): VerifiedEntry => ({
  ...lineOf(FILES + index, 7),
  p: `imap/swe/l1a/extra-${index}.cdf`,
});

let root: string;
const logFile = () => join(root, STATE_FOLDER, 'verified.jsonl');
const logLines = async () => (await readFile(logFile(), 'utf8')).split('\n').filter((line) => line !== '');

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'verified-scale-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A download of FILES files: one line each. */
async function download(): Promise<void> {
  const data = await DataRoot.open(root);
  const record = await data.verified();
  for (let index = 0; index < FILES; index += 1) record.remember(lineOf(index, 1));
  await data.close();
}

/** A `verify` pass over the FILES files, each found whole at `at`: a line each, as `verify` writes it. */
async function verifyPass(at: number): Promise<void> {
  const data = await DataRoot.open(root);
  const record = await data.verified();
  for (let index = 0; index < FILES; index += 1) {
    const line = record.recorded(pathOf(index));
    if (line) record.remember({ ...line, at });
  }
  await data.close();
}

/** Expects `record` to hold every FILES file as the pass at `at` left it. */
function expectEveryFile(record: VerifiedRecord, at: number): void {
  for (let index = 0; index < FILES; index += 1) {
    expect(record.recorded(pathOf(index)), pathOf(index)).toEqual(lineOf(index, at));
  }
}

describe('the size of the record', () => {
  it('after ten verify passes is the size one pass leaves: one line a file', async () => {
    await download();
    const sizes: number[] = [];
    for (let pass = 1; pass <= 10; pass += 1) {
      await verifyPass(1_000 + pass);
      sizes.push((await stat(logFile())).size);
      expect((await logLines()).length, `lines after pass ${pass}`).toBeLessThanOrEqual(FILES + 1);
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual((sizes[0] as number) * 1.05);
    const oneLineEach = Array.from(
      { length: FILES },
      (_, index) => JSON.stringify(lineOf(index, 1_010)).length + 1,
    );
    expect(sizes[9]).toBeLessThanOrEqual(oneLineEach.reduce((sum, bytes) => sum + bytes, 0) * 1.05);
    expectEveryFile(await VerifiedRecord.read(root), 1_010);
  });

  it('a writer opened for a few files compacts the whole log it grew, every other file kept', async () => {
    await download();
    // A log of an older version: two lines a file, no header.
    const text = Array.from({ length: FILES }, (_, index) => `${JSON.stringify(lineOf(index, 2))}\n`).join(
      '',
    );
    await writeFile(logFile(), `${await readFile(logFile(), 'utf8')}${text}`);
    const data = await DataRoot.open(root);
    const record = await data.verified([pathOf(0), pathOf(1)]);
    record.remember(lineOf(0, 3));
    await data.close();
    expect((await logLines()).length).toBeLessThanOrEqual(FILES + 1);
    const reread = await VerifiedRecord.read(root);
    expect(reread.recorded(pathOf(0))).toEqual(lineOf(0, 3));
    for (let index = 1; index < FILES; index += 1)
      expect(reread.recorded(pathOf(index))).toEqual(lineOf(index, 2));
  });
});

describe('a compaction and the other writers of the root', () => {
  it('a writer that opened the log before it appends to the new log; a reader of the old one reads the new one', async () => {
    await download();
    const writer = await VerifiedRecord.open(root);
    const reader = await VerifiedRecord.read(root);
    writer.remember(extra(0), true);
    // Passes enough that the log is compacted (here at a pass's end; older versions did so at an open).
    for (let pass = 1; pass <= 3; pass += 1) await verifyPass(pass);
    expect((await logLines()).length).toBeLessThan(3 * FILES);
    writer.remember(extra(1), true);
    writer.close();
    await reader.refresh();
    const fresh = await VerifiedRecord.read(root);
    for (const record of [fresh, reader]) {
      expect(record.recorded(extra(0).p)).toEqual(extra(0));
      expect(record.recorded(extra(1).p)).toEqual(extra(1));
      expectEveryFile(record, 3);
    }
  });

  it('lines appended while it runs, before and after its rename, are in the new log', async () => {
    const { compactionSteps } = await import('../../src/data-root/verified-log.js');
    await download();
    await verifyPass(1);
    const writer = await VerifiedRecord.open(root);
    writer.remember(extra(0), true);
    const steps = { ...compactionSteps };
    const seen: string[] = [];
    // After the old log was read: written to it, they are in its tail, which the compactor appends to the new.
    compactionSteps.beforeReplace = async () => {
      seen.push('before');
      writer.remember(extra(1), true);
    };
    // After the rename: the writer's descriptor is still on the old log.
    compactionSteps.afterReplace = async () => {
      seen.push('after');
      writer.remember(extra(2), true);
      const late = await VerifiedRecord.open(root);
      late.remember(extra(3), true);
      late.close();
    };
    try {
      await verifyPass(2);
    } finally {
      Object.assign(compactionSteps, steps);
    }
    expect(seen).toEqual(['before', 'after']);
    // Long after: only the writer's check of the log it wrote to brings this line to the new log.
    writer.remember(extra(4), true);
    writer.close();
    const fresh = await VerifiedRecord.read(root);
    for (let index = 0; index <= 4; index += 1) expect(fresh.recorded(extra(index).p)).toEqual(extra(index));
    expectEveryFile(fresh, 2);
    expect((await logLines()).length).toBeLessThanOrEqual(FILES + 10);
  });

  it('one at a time: while another holds the compaction lock the log is left to it, whole', async () => {
    await download();
    const lock = await acquireLock(join(root, STATE_FOLDER), 'verified.jsonl', 'compaction');
    try {
      await verifyPass(1);
      expect((await logLines()).length).toBe(2 * FILES);
    } finally {
      await lock.release();
    }
    await verifyPass(2);
    expect((await logLines()).length).toBe(FILES + 1);
    expectEveryFile(await VerifiedRecord.read(root), 2);
  });
});

describe('a read for some files (a scope)', () => {
  const odd = {
    reordered: 'imap/mag/l1b/2024/01/reordered.cdf',
    quoted: 'imap/mag/l1b/2024/01/quote"d.cdf',
    accented: 'imap/mag/l1b/2024/01/é.cdf',
    damaged: pathOf(20),
  };
  /**
   * A log of every form: a header, two lines for some files, a bad mark, keys in another order, damage; with
   * `writing`, a line still being written at its end.
   */
  async function writeLog(writing: boolean): Promise<number> {
    const lines = ['{"compacted":1,"entries":3000,"id":"0123abcd"}'];
    for (let index = 0; index < 3_000; index += 1) lines.push(JSON.stringify(lineOf(index, 1)));
    for (let index = 0; index < 3_000; index += 3) lines.push(JSON.stringify(lineOf(index, 2)));
    for (let index = 0; index < 3_000; index += 7)
      lines.push(JSON.stringify({ ...lineOf(index, 2), bad: 'md5:ff' }));
    lines.push(JSON.stringify({ size: 5, p: odd.reordered, mtimeMs: 1, ino: 2, sum: 'md5:00' }));
    lines.push(
      JSON.stringify({
        size: 6,
        p: 'imap/mag/l1b/2024/01/reordered-out.cdf',
        mtimeMs: 1,
        ino: 2,
        sum: 'md5:00',
      }),
    );
    lines.push(
      JSON.stringify({ ...lineOf(1, 3), p: odd.quoted }),
      JSON.stringify({ ...lineOf(2, 3), p: odd.accented }),
    );
    lines.push(`{"p":"${odd.damaged}","si`);
    await mkdir(join(root, STATE_FOLDER), { recursive: true });
    await writeFile(logFile(), `${lines.join('\n')}\n${writing ? `{"p":"${pathOf(30)}","size":1` : ''}`);
    return lines.length;
  }
  const scope = [
    ...Array.from({ length: 300 }, (_, index) => pathOf(index * 10)),
    ...Object.values(odd),
    'imap/mag/l1b/2024/01/never-held.cdf',
  ];
  const inScope = new Set(scope);
  const byPath = (a: VerifiedEntry, b: VerifiedEntry) => (a.p < b.p ? -1 : 1);

  it('holds exactly the entries of its files that a full read holds, parsing little more than their lines', async () => {
    const lines = await writeLog(true);
    const full = await VerifiedRecord.read(root);
    const parse = vi.spyOn(JSON, 'parse');
    let scoped: VerifiedRecord;
    try {
      scoped = await VerifiedRecord.read(root, scope);
    } finally {
      parse.mockRestore();
    }
    const wanted = [...full.entries()].filter((entry) => inScope.has(entry.p)).sort(byPath);
    expect(wanted).toHaveLength(300 + 3);
    expect([...scoped.entries()].sort(byPath)).toEqual(wanted);
    for (const path of scope) expect(scoped.recorded(path), path).toEqual(full.recorded(path));
    expect(scoped.recorded(odd.damaged)).toEqual(lineOf(20, 1));
    // The lines of the scope's files (about a tenth), those that must be parsed to know their path, and the header.
    expect(parse.mock.calls.length).toBeLessThan(lines / 6);
  });

  it('a data root asked again for more files reads their lines too; a scoped writer reads what others append', async () => {
    await writeLog(false);
    const full = await VerifiedRecord.read(root);
    const data = await DataRoot.open(root);
    const first = await data.readVerified(scope.slice(0, 10));
    expect(await data.readVerified(scope.slice(10))).toBe(first);
    for (const path of scope) expect(first.recorded(path), path).toEqual(full.recorded(path));
    await data.close();

    const writing = await DataRoot.open(root);
    const record = await writing.verified([pathOf(1)]);
    const other = await VerifiedRecord.open(root);
    other.remember(lineOf(1, 9), true);
    other.close();
    await record.refresh();
    expect(record.recorded(pathOf(1))).toEqual(lineOf(1, 9));
    await writing.close();
  });
});
