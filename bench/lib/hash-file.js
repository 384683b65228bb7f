/**
 * `node bench/lib/hash-file.js FILE`: prints the base64 MD5 of FILE computed by the library's own `md5Base64`
 * (dist/upload/source.js), the hashing `mission-data upload` does before it sends a file, so that it can be timed
 * apart from the transfer and set against `openssl md5`.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The library's file hashing, or undefined when this build has none of that name. */
export async function loadMd5Base64() {
  try {
    const { md5Base64 } = await import('../../dist/upload/source.js');
    return typeof md5Base64 === 'function' ? md5Base64 : undefined;
  } catch {
    return undefined;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const md5Base64 = await loadMd5Base64();
  const path = process.argv[2];
  if (!md5Base64 || !path) {
    console.error('Usage: node bench/lib/hash-file.js FILE (needs md5Base64 in dist/upload/source.js)');
    process.exitCode = 2;
  } else {
    console.log(await md5Base64(path, statSync(path).size));
  }
}
