/**
 * `crc32Combine` against zlib's own CRC-32 of the joined bytes, and, for lengths no test can hold in memory,
 * against zlib 1.2.12's other method of combining (multiplication of polynomials modulo the CRC's, x^(8n) by
 * repeated squaring), written here apart from the matrices the implementation uses.
 */

import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32Combine } from '../../src/core/checksums/crc32-of-joined-bytes.js';

const MIB = 1024 * 1024;

/** Bytes of a seeded generator: the same bytes every run. */
function bytes(size: number, seed: number): Buffer {
  const buffer = Buffer.allocUnsafe(size);
  let state = seed >>> 0 || 1;
  for (let index = 0; index < size; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    buffer[index] = state & 0xff;
  }
  return buffer;
}

/** A seeded random integer in [0, below). */
function dice(seed: number): (below: number) => number {
  let state = seed >>> 0 || 1;
  return (below) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return Math.floor((state / 2 ** 32) * below);
  };
}

// zlib 1.2.12's multmodp and x2nmodp, in the CRC's reflected form.
const POLY = 0xedb88320;
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  let x = b >>> 0;
  for (;;) {
    if ((a & m) >>> 0 !== 0) {
      p = (p ^ x) >>> 0;
      if ((a & (m - 1)) >>> 0 === 0) break;
    }
    m >>>= 1;
    x = x & 1 ? ((x >>> 1) ^ POLY) >>> 0 : x >>> 1;
  }
  return p;
}
const X2N: number[] = [];
for (let n = 0, p = 1 << 30; n < 32; n += 1, p = multModP(p, p)) X2N.push(p >>> 0);
/** x^(n·2^k) modulo the CRC's polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  for (let rest = n, power = k; rest > 0; rest = Math.floor(rest / 2), power += 1) {
    if (rest % 2 === 1) p = multModP(X2N[power % 32] as number, p);
  }
  return p;
}
const referenceCombine = (crcA: number, crcB: number, lengthB: number) =>
  (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;

describe('crc32Combine', () => {
  it('gives zlib’s CRC-32 of the joined bytes for many random splits', () => {
    const roll = dice(7);
    const whole = bytes(64 * 1024, 11);
    for (let round = 0; round < 500; round += 1) {
      const length = roll(whole.length + 1);
      const data = whole.subarray(roll(whole.length - length + 1)).subarray(0, length);
      const cut = roll(length + 1);
      const a = data.subarray(0, cut);
      const b = data.subarray(cut);
      expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(data));
    }
  });

  it('takes empty parts on either side', () => {
    const data = bytes(4096, 3);
    const empty = Buffer.alloc(0);
    expect(crc32(empty)).toBe(0);
    expect(crc32Combine(crc32(data), crc32(empty), 0)).toBe(crc32(data));
    expect(crc32Combine(crc32(empty), crc32(data), data.length)).toBe(crc32(data));
    expect(crc32Combine(0, 0, 0)).toBe(0);
  });

  it('is right for second parts of 1, 7, 4096 bytes and 16 MiB, computed by zlib on real buffers', () => {
    const first = bytes(1000, 5);
    for (const length of [1, 2, 7, 8, 255, 4096, 4097, 65_535, 16 * MIB, 16 * MIB + 3]) {
      const second = bytes(length, length);
      const joined = crc32(second, crc32(first));
      expect(crc32Combine(crc32(first), crc32(second), length), `${length} bytes`).toBe(joined);
    }
    // And a long first part with a short second one.
    const long = bytes(16 * MIB, 17);
    const short = bytes(7, 19);
    expect(crc32Combine(crc32(long), crc32(short), 7)).toBe(crc32(short, crc32(long)));
  });

  it('combines three parts in order, either way round', () => {
    const roll = dice(13);
    for (let round = 0; round < 50; round += 1) {
      const a = bytes(roll(3000), round + 1);
      const b = bytes(roll(3000), round + 101);
      const c = bytes(roll(3000), round + 201);
      const whole = crc32(Buffer.concat([a, b, c]));
      const left = crc32Combine(crc32Combine(crc32(a), crc32(b), b.length), crc32(c), c.length);
      const right = crc32Combine(crc32(a), crc32Combine(crc32(b), crc32(c), c.length), b.length + c.length);
      expect(left).toBe(whole);
      expect(right).toBe(whole);
    }
  });

  it('is order-sensitive: swapping the parts gives another CRC', () => {
    const a = bytes(100, 1);
    const b = bytes(200, 2);
    expect(crc32Combine(crc32(b), crc32(a), a.length)).not.toBe(crc32(Buffer.concat([a, b])));
  });

  it('agrees with zlib 1.2.12’s polynomial method for lengths of 2^32 bytes and beyond', () => {
    const roll = dice(29);
    const lengths = [
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 32 + 1,
      5 * 2 ** 32 + 12_345,
      2 ** 40 + 7,
      Number.MAX_SAFE_INTEGER,
    ];
    for (let round = 0; round < 20; round += 1) lengths.push(roll(2 ** 21) * 2 ** 32 + roll(2 ** 32));
    for (const length of lengths) {
      const crcA = crc32(bytes(16, length % 1000));
      const crcB = crc32(bytes(16, (length % 997) + 1));
      expect(crc32Combine(crcA, crcB, length), `${length} bytes`).toBe(referenceCombine(crcA, crcB, length));
    }
    // The reference is itself right where zlib can check it.
    const a = bytes(300, 1);
    const b = bytes(70_000, 2);
    expect(referenceCombine(crc32(a), crc32(b), b.length)).toBe(crc32(Buffer.concat([a, b])));
  });

  it('is consistent across 2^32: 16 MiB of zeros doubled 8 times is 4 GiB of zeros', () => {
    const zeros = Buffer.alloc(16 * MIB);
    let crcZeros = crc32(zeros);
    let length = zeros.length;
    for (let doubling = 0; doubling < 8; doubling += 1) {
      crcZeros = crc32Combine(crcZeros, crcZeros, length);
      length *= 2;
    }
    expect(length).toBe(2 ** 32);
    const head = bytes(1000, 9);
    const tail = bytes(33, 10);
    // head ‖ 4 GiB of zeros ‖ tail, two ways.
    const direct = crc32Combine(crc32Combine(crc32(head), crcZeros, length), crc32(tail), tail.length);
    const grouped = crc32Combine(
      crc32(head),
      crc32Combine(crcZeros, crc32(tail), tail.length),
      length + tail.length,
    );
    expect(direct).toBe(grouped);
    expect(direct).toBe(
      referenceCombine(referenceCombine(crc32(head), crcZeros, length), crc32(tail), tail.length),
    );
  });

  it('refuses a negative or fractional length', () => {
    expect(() => crc32Combine(1, 2, -1)).toThrow(RangeError);
    expect(() => crc32Combine(1, 2, 1.5)).toThrow(RangeError);
    expect(() => crc32Combine(1, 2, Number.NaN)).toThrow(RangeError);
  });
});
