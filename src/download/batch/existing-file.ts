/**
 * A file found at a destination, checked against the stored object before it is trusted: its size from a
 * one-byte ranged GET and, when the store states one, its checksum from a local hash.
 */
import type { Stats } from 'node:fs';
import type { ExpectedChecksum } from '../../core/checksums/checksum.js';
import { digestOfFile } from '../../core/checksums/file-digest.js';
import { localError } from '../../data-root/index.js';
import { discardBody } from '../../http/body.js';
import { statedChecksum } from '../../http/stated-digest.js';
import type { ObjectSource } from '../part/object-state.js';

/**
 * Checks a file found at a destination against the stored object: its size (from a one-byte ranged GET) and,
 * when the store states one, its checksum. Resolves to the checksum it matched, or undefined when it differs or
 * cannot be checked (then it is fetched again).
 */
export async function sameAsStored(
  http: ObjectSource,
  url: string,
  localPath: string,
  present: Stats,
  signal: AbortSignal | undefined,
): Promise<ExpectedChecksum | undefined> {
  const probe = await http.getObject(url, { start: 0, end: 0, signal });
  discardBody(probe.body);
  const range = /\/(\d+)\s*$/.exec(headerOf(probe.headers, 'content-range') ?? '');
  const size = range
    ? Number(range[1])
    : probe.status === 200
      ? Number(headerOf(probe.headers, 'content-length'))
      : Number.NaN;
  if (size !== present.size) return undefined;
  // The archive's checksum as its answer or its URL states it (the URL's covers the whole object).
  const expected = statedChecksum(probe.headers, probe.status === 200 && size <= 1, probe.statedDigest);
  if (!expected) return undefined;
  const digest = await digestOfFile(localPath, expected.algorithm, signal, (error) =>
    localError(`Cannot read ${localPath}`, error),
  );
  return digest.equals(expected.digest) ? expected : undefined;
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
