/** A self-signed certificate for 127.0.0.1, made by openssl, for servers of the tests that speak HTTPS. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Writes `<prefix>cert.pem` and `<prefix>key.pem` in `dir` and returns their paths. */
export async function selfSignedCertificate(
  dir: string,
  prefix = '',
): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${prefix}cert.pem`);
  const key = join(dir, `${prefix}key.pem`);
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { cert, key };
}
