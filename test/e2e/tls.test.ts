/**
 * Transfers over HTTPS through the shipped command line: the reference server with a certificate of its own
 * (made by openssl, trusted through NODE_EXTRA_CA_CERTS), a query, a download in one stream and one over
 * several connections, and an upload; and a certificate that is not trusted, refused in words.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/certificate.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  putFile,
  runCli,
  type ServeProcess,
  scienceName,
  spawnServe,
  tempDir,
} from '../helpers/e2e.js';

const SMALL = scienceName('hit', 1);
const SMALL_PATH = `imap/hit/l1a/2024/01/${SMALL}`;
const LARGE = scienceName('codice', 2, 'l2');
const LARGE_PATH = `imap/codice/l2/2024/01/${LARGE}`;
const SMALL_BYTES = bytesFor(SMALL, 70_000);
const LARGE_BYTES = bytesFor(LARGE, 9 * 1024 * 1024 + 17);
const UPLOAD = scienceName('swe', 3);
const UPLOAD_PATH = `imap/swe/l1a/2024/01/${UPLOAD}`;

let home: string;
let store: string;
let served: ServeProcess | undefined;
let trusted: Record<string, string>;

beforeAll(async () => {
  assertBuilt();
  home = await tempDir();
  store = await tempDir('mission-store-');
  await putFile(store, SMALL, SMALL_BYTES);
  await putFile(store, LARGE, LARGE_BYTES);
  await selfSignedCertificate(home);
  served = await spawnServe(
    ['--port', '0', '--store', store, '--quiet', '--tls-cert', 'cert.pem', '--tls-key', 'key.pem'],
    { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home } },
  );
  trusted = { NODE_EXTRA_CA_CERTS: join(home, 'cert.pem') };
});

afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exit;
  await cleanup(home);
  await cleanup(store);
});

describe('over HTTPS', () => {
  it('serves on https://', () => {
    expect(served?.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('queries, downloads in one stream and over four connections, and verifies every byte', async () => {
    const url = served?.url as string;
    const query = await runCli(['query', '--instrument', 'codice', '--url', url, '--output-format', 'json'], {
      cwd: home,
      env: trusted,
    });
    expect(query.code).toBe(0);
    expect(JSON.parse(query.stdout)).toHaveLength(1);
    const one = await runCli(['download', SMALL, '--url', url, '--connections', '1'], {
      cwd: home,
      env: trusted,
    });
    expect(one.stderr).toContain('1 downloaded;');
    expect(one.code).toBe(0);
    const split = await runCli(
      ['download', LARGE, '--url', url, '--connections', '4', '--part-size', '1', '--debug'],
      { cwd: home, env: trusted },
    );
    expect(split.code).toBe(0);
    // The object came in ranges: 206 answers, on connections of their own.
    expect(split.stderr).toMatch(/GET https:\/\/127\.0\.0\.1:\d+\/objects\/\S+ -> 206/);
    expect(split.stderr).toContain("The file was verified against the store's checksum.");
    expect((await readFile(join(home, 'data', SMALL_PATH))).equals(SMALL_BYTES)).toBe(true);
    expect((await readFile(join(home, 'data', LARGE_PATH))).equals(LARGE_BYTES)).toBe(true);
  });

  it('uploads a file with its Content-MD5, and the store holds its bytes', async () => {
    const bytes = bytesFor(UPLOAD, 3 * 1024 * 1024 + 5);
    await putFile(join(home, 'outbox'), UPLOAD, bytes);
    const result = await runCli(['upload', UPLOAD_PATH, '--url', served?.url as string], {
      cwd: join(home, 'outbox'),
      env: trusted,
    });
    expect(result.stderr).toContain('1 uploaded');
    expect(result.code).toBe(0);
    expect((await readFile(join(store, UPLOAD_PATH))).equals(bytes)).toBe(true);
  });

  it('refuses a server whose certificate it cannot verify, and says what to do', async () => {
    const result = await runCli(['download', SMALL, '--url', served?.url as string, '--retries', '0'], {
      cwd: await tempDir(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the server's certificate could not be verified");
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
  });
});
