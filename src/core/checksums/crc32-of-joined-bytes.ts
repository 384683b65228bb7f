/**
 * CRC-32 of two byte strings joined, from the CRC-32 of each and the second one's length, without their bytes:
 * zlib's `crc32_combine` (its GF(2) matrix method), which Node's zlib binding does not expose. Appending a zero
 * byte to a message acts on its CRC-32 as a fixed 32×32 matrix Z over GF(2), so crc(A‖B) = Z^len(B)·crc(A) ⊕
 * crc(B) (the CRC's pre- and post-inversion cancel). Z^n is the product of Z^(2^k) for the bits k of n: O(log n)
 * matrix-vector products, with the operators of 2^k zero bytes made once, by squaring, and kept.
 */

/** CRC-32 (IEEE 802.3, as zlib computes it) in its reflected form. */
const POLYNOMIAL = 0xedb88320;

/** A linear map of GF(2)^32: entry `n` is the image of bit `n`. */
type Operator = Uint32Array;

/** `operator` applied to `vector`. */
function apply(operator: Operator, vector: number): number {
  let sum = 0;
  let rest = vector >>> 0;
  for (let bit = 0; rest !== 0; bit += 1, rest >>>= 1) {
    if (rest & 1) sum ^= operator[bit] as number;
  }
  return sum >>> 0;
}

/** `operator` applied twice. */
function square(operator: Operator): Operator {
  const out = new Uint32Array(32);
  for (let bit = 0; bit < 32; bit += 1) out[bit] = apply(operator, operator[bit] as number);
  return out;
}

/** Entry k: the operator of 2^k zero bytes, made as needed. */
const zeroBytes: Operator[] = [];

function zeroBytesOperator(power: number): Operator {
  if (zeroBytes.length === 0) {
    // One zero bit shifts the register right by one and adds the polynomial when a 1 falls out.
    const bit = new Uint32Array(32);
    bit[0] = POLYNOMIAL;
    for (let n = 1; n < 32; n += 1) bit[n] = 1 << (n - 1);
    // Eight bits: one byte.
    zeroBytes.push(square(square(square(bit))));
  }
  while (zeroBytes.length <= power) zeroBytes.push(square(zeroBytes.at(-1) as Operator));
  return zeroBytes[power] as Operator;
}

/**
 * The CRC-32 of A‖B, given `crcA` = crc32(A), `crcB` = crc32(B) and `lengthB` = B's length in bytes (any safe
 * integer, 0 included); CRCs as `zlib.crc32` returns them (unsigned 32-bit).
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (!Number.isSafeInteger(lengthB) || lengthB < 0) {
    throw new RangeError(`crc32Combine: the length must be a non-negative integer, not ${lengthB}`);
  }
  let crc = crcA >>> 0;
  // Bits of the length from the lowest; division, not shifts, for lengths of 2^31 bytes and more.
  for (let power = 0, rest = lengthB; rest > 0; power += 1, rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) crc = apply(zeroBytesOperator(power), crc);
  }
  return (crc ^ crcB) >>> 0;
}
