/**
 * The CRC-32 of a part whose ranges land out of order (parallel parts), joined from each range's CRC-32 rather
 * than read back: see `CombinedCrc32`.
 */
import { crc32 } from 'node:zlib';
import type { ChecksumFeed, PartChecksum } from './checksum.js';
import { crc32Combine } from './crc32-of-joined-bytes.js';

/** Bytes `[start, start + length)` of a part, hashed as they arrived. */
interface HashedRange {
  readonly start: number;
  length: number;
  crc: number;
}

/**
 * The CRC-32 of a part whose ranges land out of order (parallel parts), without reading back what arrived: each
 * range is hashed in the receiving thread as its bytes come (`feedFrom`; zlib's CRC-32 runs at GB/s), and
 * `catchUp` joins the ranges in byte order (`crc32Combine`). Bytes no feed of this object brought (what an
 * earlier run left on disk) are read back from the part, so every byte the digest covers was hashed: as it
 * arrived, or as it lies on disk.
 */
export class CombinedCrc32 implements PartChecksum {
  readonly algorithm = 'crc32';
  /** The CRC-32 of bytes `[0, covered)`. */
  #crc = 0;
  #covered: number;
  /** Ranges hashed as they came and not yet in the prefix, by first byte. */
  readonly #ranges = new Map<number, HashedRange>();

  constructor(
    private readonly readBack: (length: number, consume: (chunk: Buffer) => void, from: number) => void,
    from = 0,
  ) {
    this.#covered = from;
  }

  /** Bytes right after the hashed prefix, in order (one stream). */
  update(chunk: Buffer): void {
    this.#crc = crc32(chunk, this.#crc);
    this.#covered += chunk.length;
  }

  flushed(): void {
    // Fed as the bytes arrived.
  }

  /**
   * A new range from `position`; one fed there before is replaced (its bytes are written over). Feeds do not
   * overlap otherwise (a download's spans are apart, and a span resumed after a dropped connection is fed anew
   * from where its bytes end); bytes two of them hold are read back.
   */
  feedFrom(position: number): ChecksumFeed {
    const range: HashedRange = { start: position, length: 0, crc: 0 };
    this.#ranges.set(position, range);
    return {
      update: (chunk) => {
        range.crc = crc32(chunk, range.crc);
        range.length += chunk.length;
      },
    };
  }

  /**
   * Extends the prefix to `upTo`: with the range hashed from there when it ends within `upTo` and no other range
   * holds any of its bytes (two feeds over the same bytes: which of them is on disk is not known), otherwise by
   * reading the part back up to where the next range starts.
   */
  catchUp(upTo: number): void {
    while (this.#covered < upTo) {
      const at = this.#covered;
      const range = this.#ranges.get(at);
      let next = upTo;
      for (const other of this.#ranges.values()) {
        if (other.start > at && other.start < next) next = other.start;
      }
      if (range !== undefined && range.length > 0 && at + range.length <= next && !this.#overlapped(range)) {
        this.#ranges.delete(at);
        this.#crc = crc32Combine(this.#crc, range.crc, range.length);
        this.#covered = at + range.length;
        continue;
      }
      let crc = 0;
      this.readBack(next - at, (chunk) => (crc = crc32(chunk, crc)), at);
      this.#crc = crc32Combine(this.#crc, crc, next - at);
      this.#covered = next;
    }
    // A range inside the prefix is done with; one that reaches past it still says which bytes are in doubt.
    for (const [start, range] of this.#ranges) {
      if (start < this.#covered && start + range.length <= this.#covered) this.#ranges.delete(start);
    }
  }

  /** True when another range holds some of the bytes of `range`. */
  #overlapped(range: HashedRange): boolean {
    const end = range.start + range.length;
    for (const other of this.#ranges.values()) {
      if (
        other !== range &&
        other.length > 0 &&
        other.start < end &&
        other.start + other.length > range.start
      )
        return true;
    }
    return false;
  }

  digest(): Promise<Buffer> {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.#crc >>> 0);
    return Promise.resolve(out);
  }

  close(): void {
    this.#ranges.clear();
  }
}
