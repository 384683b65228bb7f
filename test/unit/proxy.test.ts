/** Proxy settings: read from the environment by config.ts alone, checked, and described for --debug. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { describeProxy, hideCredentials, proxyFor, resolveProxy } from '../../src/core/proxy.js';

describe('resolveProxy', () => {
  it('is empty without proxy variables', () => {
    expect(resolveProxy({})).toEqual({ http: undefined, https: undefined, noProxy: undefined });
    expect(resolveProxy({ HTTP_PROXY: '  ' }).http).toBeUndefined();
  });

  it('prefers the lower-case forms, as undici and curl do', () => {
    const proxy = resolveProxy({
      http_proxy: 'http://lower:3128',
      HTTP_PROXY: 'http://upper:3128',
      no_proxy: 'localhost',
      NO_PROXY: 'example.org',
    });
    expect(proxy.http).toEqual({ value: 'http://lower:3128', variable: 'http_proxy' });
    expect(proxy.noProxy).toEqual({ value: 'localhost', variable: 'no_proxy' });
  });

  it('sends https:// through the http proxy when only that is set', () => {
    const proxy = resolveProxy({ HTTP_PROXY: 'http://proxy.example:3128' });
    expect(proxy.https).toEqual({ value: 'http://proxy.example:3128', variable: 'HTTP_PROXY' });
    const both = resolveProxy({ HTTP_PROXY: 'http://a:1', HTTPS_PROXY: 'http://b:2' });
    expect(both.https).toEqual({ value: 'http://b:2', variable: 'HTTPS_PROXY' });
  });

  it('reads a proxy without a scheme as an http proxy', () => {
    expect(resolveProxy({ HTTPS_PROXY: 'proxy.example:3128' }).https?.value).toBe(
      'http://proxy.example:3128',
    );
  });

  it('refuses what is no proxy URL, naming the variable and hiding a password', () => {
    expect(() => resolveProxy({ HTTPS_PROXY: 'ftp://proxy.example' })).toThrow(ConfigError);
    expect(() => resolveProxy({ http_proxy: 'http://' })).toThrow(
      /set by the http_proxy environment variable/,
    );
    expect(() => resolveProxy({ HTTPS_PROXY: 'ftp://user:secret@proxy.example' })).toThrow(
      'Invalid proxy "ftp://user:****@proxy.example"',
    );
  });
});

describe('describeProxy', () => {
  it('says when no proxy is used', () => {
    expect(describeProxy(resolveProxy({ NO_PROXY: 'localhost' }))).toBe(
      'proxy: none (HTTPS_PROXY, HTTP_PROXY and their lower-case forms are unset)',
    );
  });

  it('names each proxy, its variable and the hosts reached directly, without passwords', () => {
    expect(
      describeProxy(
        resolveProxy({ HTTPS_PROXY: 'http://me:pw@proxy.example:3128', NO_PROXY: 'localhost,.internal' }),
      ),
    ).toBe(
      'proxy: https:// addresses through http://me:****@proxy.example:3128 (HTTPS_PROXY), http:// addresses directly; directly to localhost,.internal (NO_PROXY)',
    );
  });

  it('hides only the password of a URL', () => {
    expect(hideCredentials('http://user:pass@host:1')).toBe('http://user:****@host:1');
    expect(hideCredentials('http://host:1')).toBe('http://host:1');
  });
});

describe('proxyFor', () => {
  const proxy = resolveProxy({
    HTTP_PROXY: 'http://proxy.example:3128',
    NO_PROXY: '.internal, localhost:8080',
  });

  it('names the proxy an address goes through, as undici chooses it', () => {
    expect(proxyFor(proxy, new URL('http://archive.example/query'))?.variable).toBe('HTTP_PROXY');
    expect(proxyFor(proxy, new URL('https://archive.example/query'))?.value).toBe(
      'http://proxy.example:3128',
    );
  });

  it('is undefined for the hosts NO_PROXY lists, their sub-domains and ports, and without a proxy', () => {
    expect(proxyFor(proxy, new URL('http://a.internal/query'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('http://localhost:8080/query'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('http://localhost:9090/query'))).toBeDefined();
    expect(
      proxyFor(resolveProxy({ HTTP_PROXY: 'p:1', NO_PROXY: '*' }), new URL('http://a/')),
    ).toBeUndefined();
    expect(proxyFor(resolveProxy({}), new URL('http://a/'))).toBeUndefined();
  });
});
