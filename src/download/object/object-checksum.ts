/**
 * An object's checksum as it is received: which running checksum a part gets (inline, on a thread of its own, or
 * joined from ranges), the errors of a checksum that did not match or was not stated, and the received object
 * once its bytes matched.
 */
import { BackgroundChecksum } from '../../core/checksums/background-checksum.js';
import {
  type ChecksumAlgorithm,
  type ExpectedChecksum,
  hashesInBackground,
  InlineChecksum,
  NoChecksum,
  type PartChecksum,
  showDigest,
} from '../../core/checksums/checksum.js';
import { CombinedCrc32 } from '../../core/checksums/crc32-from-ranges.js';
import { ProtocolError } from '../../core/errors.js';
import type { PartFile } from '../part/part-file.js';

/** The bytes received did not match the checksum the store stated. */
export class ChecksumMismatch extends ProtocolError {
  constructor(url: string, expected: ExpectedChecksum, actual: Buffer) {
    super(
      `GET ${url}: the bytes received do not match the object's ${expected.algorithm.toUpperCase()} from its ${expected.source} (expected ${showDigest(expected.algorithm, expected.digest)}, got ${showDigest(expected.algorithm, actual)}); nothing was saved.`,
      {
        code: 'E_CHECKSUM',
        hint: 'The data was damaged on the way or the store holds a damaged object; try again later.',
      },
    );
  }
}

/** The store stated no checksum of the object, and one was required. */
export class ChecksumUnavailable extends ProtocolError {
  constructor(url: string) {
    super(
      `GET ${url}: the store states no checksum of this object (no x-amz-checksum-*, Content-MD5 or Repr-Digest header, no digest in its download URL, and an ETag that is not an MD5), and a checksum is required; nothing was saved.`,
      {
        code: 'E_UNVERIFIED',
        hint: 'Without requiring a checksum the file is downloaded and counted as not verified.',
      },
    );
  }
}

/** Objects at least this large are hashed on a thread of their own, overlapping the receiving (see checksum.ts). */
const BACKGROUND_HASH_FROM_BYTES = 8 * 1024 * 1024;

/**
 * The checksum of a part, in the algorithm the store stated (none when it stated none): on its own thread for
 * a large object, in the receiving thread otherwise. CRC-32 is the exception: zlib's runs at several GB/s, so in
 * line it costs less than a thread's start, its reading the part back and the messages to it (256 MiB on
 * loopback: 0.11 s of the thread's time and 40 ms of messages, against 50 ms of CRC-32). Parts fetched in
 * parallel land out of order: their CRC-32s, each taken as its bytes come, are joined in order (`CombinedCrc32`),
 * where the other algorithms read the parts back.
 */
export function checksumFor(
  algorithm: ChecksumAlgorithm | undefined,
  part: Pick<PartFile, 'descriptor' | 'readBack'>,
  total: number | undefined,
  split: boolean,
): PartChecksum {
  // Nothing stated (an SSE-KMS or multipart object without x-amz-checksum-*): nothing to compare, nothing hashed.
  if (algorithm === undefined) return new NoChecksum();
  const readBack = (length: number, consume: (chunk: Buffer) => void, from: number) =>
    part.readBack(length, consume, from);
  if (algorithm === 'crc32')
    return split ? new CombinedCrc32(readBack) : new InlineChecksum(algorithm, readBack);
  const large = (total ?? 0) >= BACKGROUND_HASH_FROM_BYTES;
  if (large && hashesInBackground(algorithm)) return new BackgroundChecksum(algorithm, part.descriptor);
  return new InlineChecksum(algorithm, readBack);
}

/** What a received object turned out to be. */
export interface ReceivedObject {
  size: number;
  /** Bytes that came over the network in this run (less than `size` after a resume). */
  transferred: number;
  /** The store's checksum the bytes matched; undefined when the store stated none. */
  verifiedBy: ExpectedChecksum | undefined;
}

/** The received object, once its bytes match the checksum the store stated (when it stated one). */
export async function verified(
  shown: () => string,
  checksum: PartChecksum,
  expected: ExpectedChecksum | undefined,
  size: number,
  transferred: number,
): Promise<ReceivedObject> {
  const actual = await checksum.digest();
  if (expected && !actual.equals(expected.digest)) throw new ChecksumMismatch(shown(), expected, actual);
  return { size, transferred, verifiedBy: expected };
}
