/** The checks of the API keys and bearer tokens a server is given. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { CredentialCheck } from './context.js';

/**
 * The check of a credential against `keys`; undefined when there are none. Compares keys or tokens by their
 * SHA-256 digests, in constant time, and checks every one so timing says nothing.
 */
export function credentialCheck(keys: readonly string[] | undefined): CredentialCheck | undefined {
  if (!keys || keys.length === 0) return undefined;
  const digests = keys.map((key) => createHash('sha256').update(key).digest());
  return (given) => {
    if (given === undefined || given === '') return 'missing';
    const digest = createHash('sha256').update(given).digest();
    let accepted = false;
    for (const wanted of digests) accepted = timingSafeEqual(wanted, digest) || accepted;
    return accepted ? undefined : 'wrong';
  };
}
