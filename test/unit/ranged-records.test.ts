/**
 * The bookkeeping of a ranged download's record: which bytes a record names (finished spans and the written
 * start of spans in flight), which spans the next run asks for from them, when the record is rewritten, and
 * which records are trusted on the way back.
 */
import { describe, expect, it } from 'vitest';
import { NoChecksum } from '../../src/core/checksums/checksum.js';
import { heldBytes, type ObjectState, stateRecord } from '../../src/download/part/object-state.js';
import {
  finishedRanges,
  fromRecorded,
  toRecorded,
  validRecord,
} from '../../src/download/part/part-leftovers.js';
import { RecordCadence } from '../../src/download/part/progress-record.js';
import { SpanBook, spansOf } from '../../src/download/ranged/spans.js';

const MIB = 1024 * 1024;

describe('heldBytes', () => {
  it('extends the prefix with the ranges that reach it and merges the rest, in order', () => {
    expect(
      heldBytes(100, [
        [300, 400],
        [100, 150],
        [150, 200],
        [250, 300],
        [500, 500],
        [600, 700],
        [650, 800],
      ]),
    ).toEqual({
      written: 200,
      parts: [
        [250, 400],
        [600, 800],
      ],
    });
  });

  it('names no parts when every range is inside the prefix or empty', () => {
    expect(
      heldBytes(1000, [
        [0, 500],
        [1200, 1200],
      ]),
    ).toEqual({ written: 1000, parts: undefined });
  });

  it('names what finishedRanges takes back, unchanged', () => {
    const held = heldBytes(0, [
      [0, 3 * MIB + 17],
      [4 * MIB, 4 * MIB + 5],
      [8 * MIB, 12 * MIB],
      [12 * MIB, 13 * MIB + 1],
    ]);
    expect(held.written).toBe(3 * MIB + 17);
    expect(finishedRanges(held.parts, held.written, 16 * MIB)).toEqual(held.parts);
  });
});

describe('spans from a record', () => {
  const state = (finished: Array<[number, number]>): ObjectState & { total: number } => ({
    written: 3 * MIB + 17,
    total: 16 * MIB,
    etag: '"e"',
    finished,
  });

  it('asks only for the gaps between partial ranges, in spans of at most partSize', () => {
    const spans = spansOf(
      state([
        [4 * MIB, 4 * MIB + 5],
        [8 * MIB, 13 * MIB + 1],
      ]),
      4 * MIB,
    );
    const wanted = spans.filter((span) => !span.finished).map((span) => [span.start, span.end]);
    expect(wanted).toEqual([
      [3 * MIB + 17, 4 * MIB],
      [4 * MIB + 5, 8 * MIB],
      [13 * MIB + 1, 16 * MIB],
    ]);
    expect(spans.filter((span) => span.finished).every((span) => span.onDisk === span.end - span.start)).toBe(
      true,
    );
  });

  it('names, in its record, the written start of every span in flight and every finished one', () => {
    const book = new SpanBook({ written: 0, total: 16 * MIB, etag: '"e"' }, 4 * MIB, new NoChecksum());
    const [first, second, third] = [book.claimFront(), book.claimFront(), book.claimFront()];
    if (!first || !second || !third) throw new Error('no spans');
    first.onDisk = MIB;
    second.onDisk = 4 * MIB;
    book.finish(second);
    third.onDisk = 123;
    expect(book.held()).toEqual({
      written: MIB,
      parts: [[4 * MIB, 8 * MIB + 123]],
    });
    // The written start of the first span is not hashed yet: the prefix the checksum holds stays at 0.
    first.onDisk = 4 * MIB;
    book.finish(first);
    expect(book.held()).toEqual({ written: 8 * MIB + 123, parts: undefined });
  });
});

describe('RecordCadence', () => {
  it('records at most ten times a second however fast the bytes come: 4 MiB wait for 100 ms since the last record', () => {
    let now = 0;
    let records = 0;
    const cadence = new RecordCadence(() => (records += 1), { now: () => now });
    const lane = cadence.lane();
    // 1 GiB in a second, 1 MiB a millisecond: 256 records under the bytes rule alone.
    for (let ms = 1; ms <= 1024; ms += 1) {
      now = ms;
      lane.wrote(MIB);
    }
    expect(records).toBe(10);
  });

  it('a record the bytes asked for within the gap is written when the gap is over, though no byte comes after', async () => {
    let records = 0;
    const cadence = new RecordCadence(() => (records += 1), { gapMs: 30 });
    cadence.lane().wrote(9 * MIB);
    expect(records).toBe(0);
    await new Promise((done) => setTimeout(done, 80));
    expect(records).toBe(1);
  });

  it('records once a connection wrote 4 MiB since the last record, or a second passed and a byte came', () => {
    let now = 0;
    let records = 0;
    const cadence = new RecordCadence(() => (records += 1), { now: () => now });
    const [a, b] = [cadence.lane(), cadence.lane()];
    now = 100;
    a.wrote(3 * MIB);
    b.wrote(3 * MIB);
    expect(records).toBe(0);
    a.wrote(MIB);
    expect(records).toBe(1);
    // The record named b's bytes too: b starts afresh.
    b.wrote(3 * MIB);
    expect(records).toBe(1);
    now = 1099;
    b.wrote(1);
    expect(records).toBe(1);
    now = 1100;
    b.wrote(1);
    expect(records).toBe(2);
    // Nothing written, nothing recorded, however long.
    now = 5000;
    a.wrote(0);
    expect(records).toBe(2);
  });
});

describe('the recorded checksum', () => {
  const expected = {
    algorithm: 'crc32c' as const,
    digest: Buffer.from([1, 2, 3, 4]),
    source: 'x-amz-checksum-crc32c',
  };

  it('goes into the record with the state and comes back as it was', () => {
    const record = stateRecord({ written: 10, total: 100, etag: '"e"', expected });
    expect(record).toEqual({
      etag: '"e"',
      size: 100,
      written: 10,
      parts: undefined,
      checksum: { algorithm: 'crc32c', digest: 'AQIDBA==', source: 'x-amz-checksum-crc32c' },
    });
    expect(fromRecorded(record.checksum)).toEqual(expected);
    expect(validRecord({ ...record, pid: 1, host: 'h' })).toBe(true);
  });

  it('makes a record damaged when it cannot be true', () => {
    const base = { etag: '"e"', size: 100, written: 10, pid: 1, host: 'h' };
    const good = toRecorded(expected);
    for (const checksum of [
      { ...good, algorithm: 'crc33' },
      { ...good, digest: 'AQID' },
      { ...good, digest: 'not base64!' },
      { ...good, source: 7 },
      'crc32c',
    ]) {
      expect(validRecord({ ...base, checksum })).toBe(false);
    }
    expect(validRecord({ ...base, size: -1 })).toBe(false);
    expect(validRecord({ ...base, written: '10' })).toBe(false);
    expect(validRecord([base])).toBe(false);
    expect(validRecord(base)).toBe(true);
  });
});
