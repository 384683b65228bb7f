/** The rules that decide what an object answer proves and which headers a pre-signed request carries. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { expectedChecksum, RunningChecksum } from '../../src/core/checksums/checksum.js';
import { ApiError } from '../../src/core/errors.js';
import { readableBody } from '../../src/http/body.js';
import { isExpiredUrl, objectError } from '../../src/http/failures.js';
import { signedHeadersOnly } from '../../src/http/objects.js';
import {
  parseDigestFragment,
  reprDigestChecksum,
  splitStatedDigest,
  statedChecksum,
} from '../../src/http/stated-digest.js';
import { withDigestFragment } from '../../src/server/objects/checksums.js';

const MD5_ETAG = '"5eb63bbbe01eeed093cb22bb8f5acdc3"';

describe('checksums', () => {
  it.each([
    ['crc32c', 'e3069283'],
    ['crc64nvme', 'ae8b14860a799888'],
    ['crc32', 'cbf43926'],
  ] as const)('%s of "123456789" is the catalogue check value', async (algorithm, check) => {
    const running = new RunningChecksum(algorithm);
    running.update(Buffer.from('1234'));
    running.update(Buffer.from('56789'));
    expect((await running.digest()).toString('hex')).toBe(check);
  });

  it('an ETag is an MD5 only without SSE-KMS, DSSE-KMS, SSE-C or a multipart suffix', () => {
    expect(expectedChecksum({ etag: MD5_ETAG }, false)?.source).toBe('ETag');
    expect(
      expectedChecksum({ etag: MD5_ETAG, 'x-amz-server-side-encryption': 'AES256' }, false),
    ).toBeDefined();
    for (const headers of [
      { etag: MD5_ETAG, 'x-amz-server-side-encryption': 'aws:kms' },
      { etag: MD5_ETAG, 'x-amz-server-side-encryption': 'aws:kms:dsse' },
      { etag: MD5_ETAG, 'x-amz-server-side-encryption-customer-algorithm': 'AES256' },
      { etag: '"5eb63bbbe01eeed093cb22bb8f5acdc3-4"' },
    ]) {
      expect(expectedChecksum(headers, true)).toBeUndefined();
    }
  });

  it('with SSE-KMS an x-amz-checksum-* header is used instead', () => {
    const headers = {
      etag: MD5_ETAG,
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-checksum-crc64nvme': Buffer.from('ae8b14860a799888', 'hex').toString('base64'),
    };
    expect(expectedChecksum(headers, true)).toMatchObject({ algorithm: 'crc64nvme' });
    // A range does not carry the body's checksum, and the ETag proves nothing here.
    expect(expectedChecksum(headers, false)).toBeUndefined();
  });
});

describe('checksums stated beside the store: the download URL, Repr-Digest', () => {
  const md5 = Buffer.from('5eb63bbbe01eeed093cb22bb8f5acdc3', 'hex');
  const sha256 = Buffer.alloc(32, 7);

  it('the server writes the cheapest checksum it knows into the URL fragment (MD5, else SHA-256), and the client reads it back', () => {
    const url = 'https://s3.example/b/k?X-Amz-SignedHeaders=host&X-Amz-Signature=00';
    expect(withDigestFragment(url, { md5 })).toBe(`${url}#md5=${md5.toString('hex')}`);
    expect(withDigestFragment(url, { md5, sha256 })).toBe(`${url}#md5=${md5.toString('hex')}`);
    expect(withDigestFragment(url, { sha256 })).toBe(`${url}#sha256=${sha256.toString('hex')}`);
    expect(withDigestFragment(url, {})).toBe(url);
    // A URL that has a fragment of its own keeps it.
    expect(withDigestFragment(`${url}#part`, { md5 })).toBe(`${url}#part`);
    // Taken off: the URL is sent as the store signed it.
    expect(splitStatedDigest(withDigestFragment(url, { sha256 }))).toEqual({
      url,
      statedDigest: { algorithm: 'sha256', digest: sha256, source: 'download URL' },
    });
    expect(splitStatedDigest(url)).toEqual({ url, statedDigest: undefined });
  });

  it.each([
    'md5=abc',
    'md5=5eb63bbbe01eeed093cb22bb8f5acdc3aa',
    'crc32=cbf43926',
    'sha512=00',
    'page=2',
    'md5=',
  ])('a fragment that is no digest of a known algorithm and length (%s) states nothing', (fragment) => {
    expect(parseDigestFragment(fragment)).toBeUndefined();
    expect(splitStatedDigest(`https://s3.example/b/k?x=1#${fragment}`)).toEqual({
      url: 'https://s3.example/b/k?x=1',
      statedDigest: undefined,
    });
  });

  it('a Repr-Digest gives the cheapest algorithm it states that the client computes, of the right length', () => {
    const field = `sha-256=:${sha256.toString('base64')}:, md5=:${md5.toString('base64')}:`;
    expect(reprDigestChecksum(field)).toEqual({ algorithm: 'md5', digest: md5, source: 'Repr-Digest' });
    expect(reprDigestChecksum(`sha-512=:${Buffer.alloc(64).toString('base64')}:`)).toBeUndefined();
    expect(reprDigestChecksum('md5=:AAAA:')).toBeUndefined();
    expect(reprDigestChecksum('md5="not bytes"')).toBeUndefined();
    expect(reprDigestChecksum(`sha-256=:${sha256.toString('base64')}:;p=1`)?.algorithm).toBe('sha256');
  });

  it("the body's own checksum first, then a Repr-Digest, then the URL's digest, then an MD5 ETag", () => {
    const fromUrl = { algorithm: 'sha256' as const, digest: sha256, source: 'download URL' };
    const crc = { 'x-amz-checksum-crc32': 'Y/Q5Jg==' };
    expect(statedChecksum({ etag: MD5_ETAG, ...crc }, true, fromUrl)?.algorithm).toBe('crc32');
    // A range's answer does not carry the body's checksum: the URL's digest, of the whole object, checks it.
    expect(statedChecksum({ etag: MD5_ETAG, ...crc }, false, fromUrl)).toBe(fromUrl);
    expect(statedChecksum({ etag: MD5_ETAG }, true, fromUrl)).toBe(fromUrl);
    const repr = { 'repr-digest': `md5=:${md5.toString('base64')}:` };
    expect(statedChecksum({ etag: MD5_ETAG, ...repr }, false, fromUrl)?.source).toBe('Repr-Digest');
    expect(statedChecksum({ etag: MD5_ETAG }, false, undefined)?.source).toBe('ETag');
    const kms = { etag: MD5_ETAG, 'x-amz-server-side-encryption': 'aws:kms' };
    expect(statedChecksum(kms, true, undefined)).toBeUndefined();
    expect(statedChecksum(kms, true, fromUrl)).toBe(fromUrl);
  });
});

describe('pre-signed URLs', () => {
  it('an x-amz-* header the URL did not sign is never sent; Range and If-Match always are', () => {
    const headers = { range: 'bytes=5-', 'if-match': '"e"', 'x-amz-checksum-mode': 'ENABLED' };
    const unsigned = new URL('https://s3.example/b/k?X-Amz-SignedHeaders=host&X-Amz-Signature=00');
    expect(signedHeadersOnly(unsigned, headers)).toEqual({ range: 'bytes=5-', 'if-match': '"e"' });
    const signed = new URL('https://s3.example/b/k?X-Amz-SignedHeaders=host%3Bx-amz-checksum-mode');
    expect(signedHeadersOnly(signed, headers)).toEqual(headers);
  });

  it('a 403 is an expired URL when it says so, or when the URL is older than a few seconds', () => {
    const now = Date.now();
    const expired = new ApiError(
      { method: 'GET', url: 'u', status: 403, message: 'AccessDenied: Request has expired' },
      { urlExpired: true, peer: 'object store' },
    );
    const denied = new ApiError({ method: 'GET', url: 'u', status: 403, message: 'SignatureDoesNotMatch' });
    expect(isExpiredUrl(expired, now, now)).toBe(true);
    expect(isExpiredUrl(denied, now, now + 1_000)).toBe(false);
    expect(isExpiredUrl(denied, now, now + 60_000)).toBe(true);
    // The field decides, not the words of the message.
    const words = new ApiError({ method: 'GET', url: 'u', status: 403, message: 'Request has expired' });
    expect(isExpiredUrl(words, now, now)).toBe(false);
  });

  it("the transport reads the store's answer into fields: a declared errno, an expired URL", async () => {
    const answer = (status: number, text: string, headers: Record<string, string> = {}) =>
      objectError(
        'PUT',
        new URL('http://127.0.0.1:1/objects/k?sig=1'),
        { statusCode: status, headers, body: readableBody(Readable.from([Buffer.from(text)])) },
        undefined,
      );
    const full = await answer(500, 'The store is read-only (EROFS); nothing was stored.\n', {
      'x-store-errno': 'EROFS',
    });
    expect(full.storeErrno).toBe('EROFS');
    expect(full.message).toBe(
      'PUT http://127.0.0.1:1/objects/k?…: 500 The store is read-only (EROFS); nothing was stored.',
    );
    expect(
      (await answer(500, 'The store is read-only (EROFS); nothing was stored.\n')).storeErrno,
    ).toBeUndefined();
    expect((await answer(500, 'x', { 'x-store-errno': 'not an errno' })).storeErrno).toBeUndefined();
    const xml =
      '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';
    const expired = await answer(403, xml);
    expect(expired.urlExpired).toBe(true);
    expect(expired.storeCode).toBe('AccessDenied');
    expect((await answer(403, 'Bad signature: this URL was not issued by this server.')).urlExpired).toBe(
      false,
    );
  });
});

describe('--retries and --timeout settings', () => {
  it('resolve flag > environment > configuration file > default, and are checked', async () => {
    const { loadConfig } = await import('../../src/core/config.js');
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const folder = await mkdtemp(join(tmpdir(), 'mission-config-'));
    const configFile = join(folder, 'config.json');
    try {
      const defaults = await loadConfig({}, { env: {}, configFile });
      expect(defaults).toMatchObject({ retries: 3, timeout: 30 });
      expect(defaults.sources).toMatchObject({ retries: 'default', timeout: 'default' });
      await writeFile(configFile, JSON.stringify({ retries: '7', timeout: '90' }));
      expect(await loadConfig({}, { env: {}, configFile })).toMatchObject({ retries: 7, timeout: 90 });
      const fromEnv = await loadConfig({}, { env: { MISSION_DATA_RETRIES: '1' }, configFile });
      expect(fromEnv.retries).toBe(1);
      expect(fromEnv.sources.retries).toBe('environment (MISSION_DATA_RETRIES)');
      expect((await loadConfig({ retries: '0' }, { env: {}, configFile })).retries).toBe(0);
      await expect(loadConfig({ timeout: '0' }, { env: {}, configFile })).rejects.toThrow(
        /Invalid timeout "0", set by the --timeout flag/,
      );
      await expect(loadConfig({ retries: 'many' }, { env: {}, configFile })).rejects.toThrow(/from 0 to 20/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
