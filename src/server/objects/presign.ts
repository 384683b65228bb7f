/** Pre-signed object URLs: HMAC-SHA256 over (method, key, expiry) with a per-store secret. */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../../core/errors.js';

/** Methods a URL can be signed for; HEAD is allowed by a GET signature. */
export type SignedMethod = 'GET' | 'PUT';

/** Lifetime of each kind of URL, in seconds (as the real service: uploads one hour, downloads one day). */
export const URL_LIFETIME_SECONDS: Readonly<Record<SignedMethod, number>> = { PUT: 3600, GET: 86_400 };

/** The query parameters a pre-signed URL carries. */
export const SIGNATURE_PARAMETERS = {
  method: 'X-Method',
  expires: 'X-Expires',
  signature: 'X-Signature',
} as const;

/** The route prefix of objects, shared by signing and routing. */
export const OBJECT_PREFIX = '/objects/';

/** The dot-file that keeps a store's secret, so URLs stay valid across restarts. */
export const SECRET_FILE = '.mission-data-secret';

/** Reads the store's secret, creating it (exclusively, owner-only) on first use. */
export async function loadStoreSecret(storeDir: string): Promise<string> {
  const file = join(storeDir, SECRET_FILE);
  const fresh = randomBytes(32).toString('hex');
  try {
    await writeFile(file, `${fresh}\n`, { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Never through a symlink: one placed in the store could make the secret a file anyone can read.
  const text = await readFile(file, {
    encoding: 'utf8',
    flag: constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP')
      throw new StoreError(`${file} is a symlink; the store's secret must be a plain file.`);
    throw error;
  });
  const stored = text.trim();
  if (stored.length < 32)
    throw new StoreError(`The secret in ${file} is too short; delete the file to make a new one.`);
  return stored;
}

/** Why a request's signature is refused: the body of its 403, and whether the URL merely expired. */
export interface SignatureProblem {
  message: string;
  expired: boolean;
}

/** Signs and checks object URLs with one secret. */
export class UrlSigner {
  readonly #secret: string;

  constructor(secret: string) {
    this.#secret = secret;
  }

  #mac(method: string, key: string, expires: string): Buffer {
    return createHmac('sha256', this.#secret).update(`${method}\n${key}\n${expires}`).digest();
  }

  /** The pre-signed URL of `key` for `method` below `baseUrl`, valid `lifetime` seconds from `now` (ms). */
  sign(
    baseUrl: string,
    method: SignedMethod,
    key: string,
    now = Date.now(),
    lifetime = URL_LIFETIME_SECONDS[method],
  ): string {
    const expires = String(Math.floor(now / 1000) + lifetime);
    const signature = this.#mac(method, key, expires).toString('hex');
    const { method: m, expires: e, signature: s } = SIGNATURE_PARAMETERS;
    return `${baseUrl}${OBJECT_PREFIX}${key}?${m}=${method}&${e}=${expires}&${s}=${signature}`;
  }

  /**
   * Checks the signature of a request for `key`; returns what is wrong (the body of a 403, and whether the URL
   * merely expired), or undefined when the request may proceed.
   */
  problem(
    method: string,
    key: string,
    query: URLSearchParams,
    now = Date.now(),
  ): SignatureProblem | undefined {
    const { method: m, expires: e, signature: s } = SIGNATURE_PARAMETERS;
    const signedMethod = query.get(m);
    const expires = query.get(e);
    const signature = query.get(s);
    if (signedMethod === null || expires === null || signature === null) {
      return {
        message: `Missing signature: this URL needs ${m}, ${e} and ${s}; get one from /upload or /download.`,
        expired: false,
      };
    }
    const given = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : undefined;
    if (
      !given ||
      !/^\d{1,12}$/.test(expires) ||
      !timingSafeEqual(given, this.#mac(signedMethod, key, expires))
    ) {
      return {
        message: 'Bad signature: this URL was not issued by this server for this object.',
        expired: false,
      };
    }
    const wanted = method === 'HEAD' ? 'GET' : method;
    if (signedMethod !== wanted)
      return { message: `This URL is signed for ${signedMethod}, not ${method}.`, expired: false };
    if (Number(expires) * 1000 <= now) {
      const at = new Date(Number(expires) * 1000).toISOString();
      return { message: `This URL expired at ${at}; ask for a new one.`, expired: true };
    }
    return undefined;
  }
}
