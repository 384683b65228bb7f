/**
 * What each file of a batch asks of small helpers, where they take a shorter way for the common case (a plain
 * storage path, an absolute object URL, one signal heard by many transfers): the answers stay those of the long way.
 */
import { getEventListeners } from 'node:events';
import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listenForAbort } from '../../src/core/abort-hub.js';
import { hostOf, parseHttpUrl } from '../../src/core/urls.js';
import { readEnvelope } from '../../src/http/envelope.js';
import { encodePath } from '../../src/http/request-path.js';
import { resolveLocalPath } from '../../src/naming/layout.js';

const NAME = 'imap_mag_l1a_sci_20240101_20240101_v01-00.cdf';

describe('listenForAbort', () => {
  it('calls each callback once, in order, through one listener of the signal', () => {
    const controller = new AbortController();
    const heard: string[] = [];
    for (let i = 0; i < 100; i += 1) listenForAbort(controller.signal, () => heard.push(`a${i}`));
    const stop = listenForAbort(controller.signal, () => heard.push('stopped'));
    listenForAbort(controller.signal, () => heard.push('last'));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    stop();
    controller.abort();
    controller.abort();
    expect(heard).toEqual([...Array.from({ length: 100 }, (_, i) => `a${i}`), 'last']);
  });

  it('does not call a callback that an earlier one stopped, nor one added after the abort', () => {
    const controller = new AbortController();
    const heard: string[] = [];
    let stopSecond = () => {};
    listenForAbort(controller.signal, () => {
      heard.push('first');
      stopSecond();
      listenForAbort(controller.signal, () => heard.push('added during'));
    });
    stopSecond = listenForAbort(controller.signal, () => heard.push('second'));
    listenForAbort(controller.signal, () => heard.push('third'));
    controller.abort();
    listenForAbort(controller.signal, () => heard.push('added after'));
    expect(heard).toEqual(['first', 'third']);
  });

  it('keeps the callbacks of two signals apart', () => {
    const one = new AbortController();
    const two = new AbortController();
    const heard: string[] = [];
    listenForAbort(one.signal, () => heard.push('one'));
    listenForAbort(two.signal, () => heard.push('two'));
    two.abort();
    expect(heard).toEqual(['two']);
    one.abort();
    expect(heard).toEqual(['two', 'one']);
  });
});

describe('hostOf', () => {
  const addresses = [
    'http://127.0.0.1:9000/objects/a?X-Signature=1#md5=00',
    'http://127.0.0.1:9000/objects/b',
    'HTTP://Store.Example.ORG:80/bucket/key?x=1',
    'https://store.example.org:443/bucket/key',
    'https://store.example.org:8443',
    'https://[::1]:9000/key',
    'http://store.example.org?query-only',
    'http://store.example.org#hash-only',
    'https://xn--bcher-kva.example/key',
  ];

  it('is the host URL reads, each time, for addresses of one authority and of many', () => {
    for (let round = 0; round < 2; round += 1) {
      for (const address of addresses) expect(hostOf(address)).toBe(new URL(address).host);
    }
    // More authorities than are kept: the answers stay right after the memory is cleared.
    for (let port = 1000; port < 1200; port += 1) {
      expect(hostOf(`http://127.0.0.1:${port}/k`)).toBe(`127.0.0.1:${port}`);
    }
  });

  it('refuses what is not a URL as URL does', () => {
    expect(() => hostOf('not a url')).toThrow(TypeError);
    expect(() => hostOf('http://exa mple.org/key')).toThrow(TypeError);
  });
});

describe('parseHttpUrl', () => {
  const base = new URL('http://127.0.0.1:9000/download/x');

  it('reads an absolute address without its base, and a relative one against it', () => {
    expect((parseHttpUrl('https://store.example.org/k?a=1', base) as URL).href).toBe(
      'https://store.example.org/k?a=1',
    );
    expect((parseHttpUrl('HTTPS://Store.example.org/k', base) as URL).href).toBe(
      'https://store.example.org/k',
    );
    expect((parseHttpUrl('/objects/k?sig=2', base) as URL).href).toBe(
      'http://127.0.0.1:9000/objects/k?sig=2',
    );
    expect((parseHttpUrl('http:/objects/k', base) as URL).href).toBe('http://127.0.0.1:9000/objects/k');
    expect(parseHttpUrl('ftp://store.example.org/k', base)).toBe('not http(s)');
    expect(parseHttpUrl('http://exa mple.org/', base)).toBe('not a URL');
  });
});

describe('encodePath', () => {
  it('sends a plain storage path as it is, and escapes any other', () => {
    expect(encodePath(`imap/mag/l1a/2024/01/${NAME}`, 'path')).toBe(`imap/mag/l1a/2024/01/${NAME}`);
    expect(encodePath('imap/spice/ck/imap_2025_005_a01.ah.bc', 'path')).toBe(
      'imap/spice/ck/imap_2025_005_a01.ah.bc',
    );
    expect(encodePath('imap/notes/a b+c~.txt', 'path')).toBe('imap/notes/a%20b%2Bc~.txt');
    expect(encodePath('imap/é/ü.cdf', 'path')).toBe('imap/%C3%A9/%C3%BC.cdf');
    expect(() => encodePath('imap/../etc/passwd', 'path')).toThrow(/'\.\.' segment/);
  });
});

describe('readEnvelope', () => {
  it('reads an envelope, a blank body and a body of white space alike', () => {
    const envelope = readEnvelope(
      302,
      { Location: 'http://a/b', 'X-Request-Id': ['1', '2'], 'Content-Length': 10 as unknown as string },
      '{"statusCode":302,"headers":{"Location":"http://c/d"},"body":{"download_url":"http://c/d"}}',
      'GET x',
    );
    expect(envelope).toEqual({
      status: 302,
      headers: { location: 'http://c/d', 'x-request-id': '1, 2', 'content-length': '10' },
      body: { download_url: 'http://c/d' },
    });
    expect(readEnvelope(204, {}, '', 'GET x').body).toBe('');
    expect(readEnvelope(502, {}, ' \n\u00a0\ufeff', 'GET x')).toEqual({
      status: 502,
      headers: {},
      body: ' \n\u00a0\ufeff',
    });
  });
});

describe('resolveLocalPath', () => {
  it('places files below absolute roots, however the root is written, and below a relative one', () => {
    const root = resolve('/tmp', 'roots', 'one');
    const expected = join(root, 'imap', 'mag', 'l1a', '2024', '01', NAME);
    expect(resolveLocalPath(root, NAME)).toBe(expected);
    expect(resolveLocalPath(`${root}${sep}`, NAME)).toBe(expected);
    expect(resolveLocalPath(`${root}${sep}.${sep}`, NAME)).toBe(expected);
    expect(resolveLocalPath(resolve('/tmp', 'roots', 'two'), NAME)).toBe(
      join(resolve('/tmp', 'roots', 'two'), 'imap', 'mag', 'l1a', '2024', '01', NAME),
    );
    expect(resolveLocalPath(root, NAME)).toBe(expected);
    expect(resolveLocalPath('relative-root', NAME)).toBe(
      resolve('relative-root', 'imap/mag/l1a/2024/01', NAME),
    );
    expect(resolveLocalPath(resolve('/'), NAME)).toBe(join(resolve('/'), 'imap/mag/l1a/2024/01', NAME));
  });
});
