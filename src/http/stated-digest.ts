/**
 * The checksums an object is stated to have beside the store's own headers: the digest the service's
 * `/download` answer writes into the fragment of the object URL it hands out (`#sha256=<hex>` or `#md5=<hex>`,
 * the form package indexes give download URLs, PEP 503), and a `Repr-Digest` (RFC 9530) an object answer may
 * carry. HTTP never sends a fragment, so the URL works as given for every client, the specification's answer keeps
 * its exact shape, and the digest travels with the URL through every caller to the GET that checks the bytes (a
 * renewed URL brings its own). The server writes the fragment in `server/objects/checksums.ts`.
 */
import {
  type ChecksumAlgorithm,
  DIGEST_BYTES,
  type ExpectedChecksum,
  expectedChecksum,
} from '../core/checksums/checksum.js';

/** The algorithms a download URL's fragment may name (by their hashlib names, as PEP 503 has them). */
const FRAGMENT_ALGORITHMS: Readonly<Record<string, ChecksumAlgorithm>> = {
  md5: 'md5',
  sha1: 'sha1',
  sha256: 'sha256',
};

/**
 * The algorithms of the HTTP Digest Algorithm registry this client computes, by their registry keys, cheapest
 * first (as for the store's headers, the cheapest stated is used: each catches damaged bytes alike).
 */
const REPR_ALGORITHMS: ReadonlyArray<[string, ChecksumAlgorithm]> = [
  ['md5', 'md5'],
  ['sha', 'sha1'],
  ['sha-256', 'sha256'],
  ['crc32c', 'crc32c'],
];

/** What a download URL's fragment states: its algorithm and digest; undefined for any other fragment. */
export function parseDigestFragment(fragment: string): ExpectedChecksum | undefined {
  const match = /^([a-z0-9]+)=([0-9a-fA-F]+)$/.exec(fragment);
  const algorithm = match ? FRAGMENT_ALGORITHMS[(match[1] as string).toLowerCase()] : undefined;
  if (!match || algorithm === undefined) return undefined;
  const digest = Buffer.from(match[2] as string, 'hex');
  return digest.length === DIGEST_BYTES[algorithm]
    ? { algorithm, digest, source: 'download URL' }
    : undefined;
}

/**
 * A download URL without its fragment (a request line never carries one), and the digest the fragment states;
 * undefined when it states none. Cut from the text as the URL parser would (the first `#` begins the fragment),
 * before the URL is parsed: taking it off a parsed URL parses the URL again.
 */
export function splitStatedDigest(value: string): {
  url: string;
  statedDigest: ExpectedChecksum | undefined;
} {
  const at = value.indexOf('#');
  if (at === -1) return { url: value, statedDigest: undefined };
  return { url: value.slice(0, at), statedDigest: parseDigestFragment(value.slice(at + 1)) };
}

/**
 * The members of a `Repr-Digest` field (an RFC 8941 dictionary of byte sequences, `sha-256=:…:, md5=:…:`) by
 * key; members that are not a byte sequence are left out, parameters ignored.
 */
export function reprDigestMembers(value: string | undefined): Map<string, Buffer> {
  const members = new Map<string, Buffer>();
  for (const member of (value ?? '').split(',')) {
    const match = /^\s*([a-z*][a-z0-9_.*-]*)=:([A-Za-z0-9+/]*={0,2}):(?:;.*)?\s*$/.exec(member);
    if (match) members.set(match[1] as string, Buffer.from(match[2] as string, 'base64'));
  }
  return members;
}

/**
 * The checksum to check an object against from a `Repr-Digest` field: the cheapest algorithm it states that
 * this client computes, with a digest of the right length; undefined when it states none (never a guess).
 */
export function reprDigestChecksum(value: string | undefined): ExpectedChecksum | undefined {
  if (value === undefined) return undefined;
  const members = reprDigestMembers(value);
  for (const [key, algorithm] of REPR_ALGORITHMS) {
    const digest = members.get(key);
    if (digest && digest.length === DIGEST_BYTES[algorithm]) {
      return { algorithm, digest, source: 'Repr-Digest' };
    }
  }
  return undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * The checksum an object answer is checked against: one of the body the answer states (a whole object's
 * `Content-MD5` or `x-amz-checksum-*`), else a `Repr-Digest` it states, else the digest its URL carries
 * (`fromUrl`), else an ETag that is the object's MD5. A `Repr-Digest` and a URL's digest describe the whole
 * object, so they check a range's answer too. Undefined when nothing is stated.
 */
export function statedChecksum(
  headers: Headers,
  whole: boolean,
  fromUrl: ExpectedChecksum | undefined,
): ExpectedChecksum | undefined {
  const fromHeaders = expectedChecksum(headers, whole);
  if (fromHeaders && fromHeaders.source !== 'ETag') return fromHeaders;
  const own = headers['repr-digest'];
  return reprDigestChecksum(Array.isArray(own) ? own.join(', ') : own) ?? fromUrl ?? fromHeaders;
}
