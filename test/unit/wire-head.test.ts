/**
 * The response head as the wire client reads it: names in lower case whatever their spelling, values without the
 * white space around them, repeated headers in order, whether the connection serves again and for how long, and
 * the lines it refuses.
 */
import { describe, expect, it } from 'vitest';
import { parseHead, WireError } from '../../src/http/wire/head.js';

const head = (...lines: string[]) => lines.join('\r\n');

describe('parseHead', () => {
  it('lowers every name, trims every value as trim does, and keeps repeated headers in order', () => {
    const parsed = parseHead(
      head(
        'HTTP/1.1 200 OK',
        'X-Request-Id:  abc ',
        'content-type:\tapplication/octet-stream\t',
        'Set-Cookie: a=1',
        'SET-COOKIE: b=2',
        'set-cookie: c=3',
        'X-Empty:',
        'X-Inner: two  words here',
        'X-Nbsp: \u00a0value\u00a0',
        'Content-Length: 10',
      ),
      'GET',
    );
    expect(parsed.statusCode).toBe(200);
    expect(parsed.headers).toEqual({
      'x-request-id': 'abc',
      'content-type': 'application/octet-stream',
      'set-cookie': ['a=1', 'b=2', 'c=3'],
      'x-empty': '',
      'x-inner': 'two  words here',
      'x-nbsp': 'value',
      'content-length': '10',
    });
    expect(parsed.framing).toEqual({ kind: 'length', length: 10 });
  });

  it('reads one name alike in every spelling, however many names a server sends', () => {
    const names = Array.from({ length: 600 }, (_, i) => `X-Name-${i}`);
    for (const spelling of [
      (n: string) => n,
      (n: string) => n.toUpperCase(),
      (n: string) => n.toLowerCase(),
    ]) {
      const parsed = parseHead(
        head('HTTP/1.1 204 No Content', ...names.map((name, i) => `${spelling(name)}: ${i}`)),
        'GET',
      );
      expect(Object.keys(parsed.headers)).toEqual(names.map((name) => name.toLowerCase()));
      expect(parsed.headers['x-name-599']).toBe('599');
    }
  });

  it('reads the names every answer carries alike in any spelling, and near misses as names of their own', () => {
    const parsed = parseHead(
      head(
        'HTTP/1.1 200 OK',
        'ETag: "a"',
        'Etag: "b"',
        'etag: "c"',
        'ETAG: "d"',
        'eTag: "e"',
        'Content-MD5: m1',
        'CONTENT-MD5: m2',
        'x-amz-checksum-crc32: c1',
        'X-Amz-Checksum-Crc32: c2',
        'X-AMZ-CHECKSUM-CRC32: c3',
        'x-amz-checksum-crc32c: cc',
        'Content-Lengthy: 3',
        'Content-Lengt: 4',
        'Date2: x',
        'Content-Length: 10',
      ),
      'GET',
    );
    expect(parsed.headers).toEqual({
      etag: ['"a"', '"b"', '"c"', '"d"', '"e"'],
      'content-md5': ['m1', 'm2'],
      'x-amz-checksum-crc32': ['c1', 'c2', 'c3'],
      'x-amz-checksum-crc32c': 'cc',
      'content-lengthy': '3',
      'content-lengt': '4',
      date2: 'x',
      'content-length': '10',
    });
    expect(parsed.framing).toEqual({ kind: 'length', length: 10 });
  });

  it('lowers a long name as a short one', () => {
    const long = `X-${'Long'.repeat(100)}`;
    const parsed = parseHead(head('HTTP/1.1 204 No Content', `${long}: 1`, `${long}: 2`), 'GET');
    expect(parsed.headers).toEqual({ [long.toLowerCase()]: ['1', '2'] });
  });

  it('says whether the connection serves again, by the version and Connection', () => {
    const keepAlive = (status: string, ...lines: string[]) =>
      parseHead(head(status, ...lines, 'Content-Length: 0'), 'GET').keepAlive;
    expect(keepAlive('HTTP/1.1 200 OK')).toBe(true);
    expect(keepAlive('HTTP/1.1 200 OK', 'Connection: keep-alive')).toBe(true);
    expect(keepAlive('HTTP/1.1 200 OK', 'Connection: close')).toBe(false);
    expect(keepAlive('HTTP/1.1 200 OK', 'Connection: Upgrade, Close')).toBe(false);
    expect(keepAlive('HTTP/1.1 200 OK', 'Connection: Keep-Alive, Upgrade')).toBe(true);
    expect(keepAlive('HTTP/1.1 200 OK', 'Connection: upgrade', 'Connection: close')).toBe(false);
    expect(keepAlive('HTTP/1.0 200 OK')).toBe(false);
    expect(keepAlive('HTTP/1.0 200 OK', 'Connection: keep-alive')).toBe(true);
    expect(keepAlive('HTTP/1.0 200 OK', 'Connection: Keep-Alive')).toBe(true);
    expect(keepAlive('HTTP/1.0 200 OK', 'Connection: close')).toBe(false);
  });

  it("reads the server's keep-alive timeout in any case, list or repetition", () => {
    const timeout = (...lines: string[]) =>
      parseHead(head('HTTP/1.1 200 OK', ...lines, 'Content-Length: 0'), 'GET').keepAliveMs;
    expect(timeout()).toBeUndefined();
    expect(timeout('Keep-Alive: timeout=5')).toBe(5000);
    expect(timeout('Keep-Alive: max=100, Timeout=7')).toBe(7000);
    expect(timeout('Keep-Alive: max=100,timeout=2')).toBe(2000);
    expect(timeout('Keep-Alive: max=1', 'keep-alive: TIMEOUT=3')).toBe(3000);
    expect(timeout('Keep-Alive: mytimeout=9')).toBeUndefined();
    expect(timeout('Keep-Alive: timeout = 5')).toBeUndefined();
    expect(timeout('Keep-Alive: max=100')).toBeUndefined();
  });

  it('refuses a header line whose name is empty, not a token, or has no colon', () => {
    for (const line of [
      ': x',
      'Bad Name: x',
      'No-Colon',
      'Caf\u00e9: x',
      'X-A\tB: y',
      ' X-Lead: z',
      'Date : x',
      ' Date: x',
      'Date',
    ]) {
      expect(() => parseHead(head('HTTP/1.1 200 OK', line, 'Content-Length: 0'), 'GET')).toThrow(WireError);
    }
    try {
      parseHead(head('HTTP/1.1 200 OK', 'Bad Name: x'), 'GET');
    } catch (error) {
      expect((error as WireError).code).toBe('HPE_INVALID_HEADER_TOKEN');
      expect((error as WireError).message).toContain('"Bad Name: x"');
    }
  });
});
