/**
 * Behind a proxy: the built command line, with HTTP_PROXY set, sends every request (the service's API routes
 * and the object store's, upload and download) through a real forwarding proxy running in its own process,
 * and NO_PROXY sends them directly.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceServer, type RequestLogEntry, startReferenceServer } from '../../src/server/index.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  putFile,
  ROOT,
  runCli,
  scienceName,
  tempDir,
} from '../helpers/e2e.js';

/**
 * The proxy process: TooTallNate's `proxy` (the one undici's own tests use) in front of nothing but itself,
 * reporting each request it forwards and each tunnel it opens as a JSON line on stdout.
 */
const PROXY_SCRIPT = `
import { createServer } from 'node:http';
import { createProxy } from 'proxy';
const server = createProxy(createServer());
server.on('request', (req) => console.log(JSON.stringify({ kind: 'request', method: req.method, url: req.url })));
server.on('connect', (req) => console.log(JSON.stringify({ kind: 'connect', url: req.url })));
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ kind: 'listening', port: server.address().port })));
`;

interface ProxyLine {
  kind: 'request' | 'connect' | 'listening';
  method?: string;
  url?: string;
  port?: number;
}

const FILE = scienceName('mag', 7);
const CONTENTS = bytesFor(FILE, 300_000);
const STORAGE_PATH = `imap/mag/l1a/2024/01/${FILE}`;

let proxy: ChildProcess;
let proxyUrl: string;
const proxied: ProxyLine[] = [];
let server: ReferenceServer;
const served: RequestLogEntry[] = [];
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  home = await tempDir();
  server = await startReferenceServer({
    store,
    port: 0,
    secret: 'proxy-test-secret-0123456789',
    log: (entry) => served.push(entry),
  });
  // Run from the repository so that `proxy` resolves from its devDependencies.
  proxy = spawn(process.execPath, ['--input-type=module', '-e', PROXY_SCRIPT], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: proxy.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((done, fail) => {
    proxy.on('exit', (code) => fail(new Error(`the proxy process ended with ${code}`)));
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as ProxyLine;
      if (parsed.kind === 'listening') done(parsed.port as number);
      else proxied.push(parsed);
    });
  });
  proxyUrl = `http://127.0.0.1:${port}`;
  await putFile(join(home, 'data'), FILE, CONTENTS);
}, 30_000);

afterAll(async () => {
  proxy?.kill();
  await server?.close();
  await cleanup(store);
  await cleanup(home);
});

beforeEach(() => {
  proxied.length = 0;
  served.length = 0;
});

/** The requests the server saw, as `METHOD path`, in order. */
const seenByServer = () => served.map((entry) => `${entry.method} ${entry.path}`);
/** The requests the proxy forwarded, as `METHOD path` of their absolute-form URLs, in order. */
const seenByProxy = () =>
  proxied.map((line) => `${line.method} ${new URL(line.url as string).pathname}`).map(decodeURI);

describe('with HTTP_PROXY set', () => {
  it('uploads, queries and downloads with every request going through the proxy', async () => {
    const env = { HTTP_PROXY: proxyUrl };
    const upload = await runCli(['upload', '--url', server.url, STORAGE_PATH], { cwd: home, env });
    expect(upload.stderr).toContain('1 uploaded');
    expect(upload.code).toBe(0);

    const query = await runCli(
      ['query', '--url', server.url, '--instrument', 'mag', '--output-format', 'json'],
      {
        cwd: home,
        env,
      },
    );
    expect(query.code).toBe(0);
    expect(JSON.parse(query.stdout)).toMatchObject([{ file_path: STORAGE_PATH }]);

    const download = await runCli(['download', '--url', server.url, '--data-dir', 'fetched', FILE], {
      cwd: home,
      env,
    });
    expect(download.code).toBe(0);
    expect(await readFile(join(home, 'fetched', STORAGE_PATH))).toEqual(CONTENTS);

    // API routes and object routes alike: upload's GET /upload and object PUT, the query, download's
    // GET /download and object GET.
    const methods = seenByServer().map((line) => line.split(' ')[0]);
    expect(methods).toEqual(expect.arrayContaining(['GET', 'PUT']));
    expect(seenByServer().some((line) => line.startsWith('GET /upload/'))).toBe(true);
    expect(seenByServer().some((line) => line.startsWith('GET /download/'))).toBe(true);
    expect(seenByServer().some((line) => line.startsWith('GET /query'))).toBe(true);
    expect(served.length).toBeGreaterThanOrEqual(5);
    // Every request the server answered came through the proxy, and nothing was tunnelled past its view.
    expect(
      seenByProxy()
        .map((line) => line.replace(/\?.*$/, ''))
        .sort(),
    ).toEqual(
      seenByServer()
        .map((line) => line.replace(/\?.*$/, ''))
        .sort(),
    );
    expect(proxied.every((line) => line.kind === 'request')).toBe(true);
  });

  it('--debug names the proxy in use', async () => {
    const run = await runCli(['query', '--url', server.url, '--instrument', 'mag', '--debug'], {
      cwd: home,
      env: { http_proxy: proxyUrl },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`debug: proxy: https:// addresses through ${proxyUrl} (http_proxy)`);
    expect(run.stderr).toContain(`http:// addresses through ${proxyUrl} (http_proxy)`);
  });

  it('goes directly to hosts NO_PROXY lists', async () => {
    const run = await runCli(['download', '--url', server.url, '--data-dir', 'direct', '--debug', FILE], {
      cwd: home,
      env: { HTTP_PROXY: proxyUrl, NO_PROXY: 'localhost,127.0.0.1' },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('directly to localhost,127.0.0.1 (NO_PROXY)');
    expect(await readFile(join(home, 'direct', STORAGE_PATH))).toEqual(CONTENTS);
    expect(served.length).toBeGreaterThanOrEqual(2);
    expect(proxied).toEqual([]);
  });

  it('names a proxy that is not running, not the service behind it', async () => {
    // A port nothing listens on: bind one, note it, and close it.
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise((done) => probe.close(done));
    const run = await runCli(['query', '--url', server.url, '--instrument', 'mag', '--retries', '0'], {
      cwd: home,
      env: { HTTP_PROXY: `http://127.0.0.1:${deadPort}` },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `connection refused by the proxy http://127.0.0.1:${deadPort} (set by HTTP_PROXY): nothing is listening at 127.0.0.1:${deadPort}.`,
    );
    expect(run.stderr).toContain(
      `Hint: Is the proxy at 127.0.0.1:${deadPort} running? HTTP_PROXY sends http:// requests through it; unset HTTP_PROXY`,
    );
    expect(run.stderr).not.toContain('Is the service running');
    expect(run.stderr).not.toContain('--url');
    expect(served).toEqual([]);
  });

  it('refuses a proxy that is not a URL, naming the variable', async () => {
    const run = await runCli(['query', '--url', server.url, '--instrument', 'mag'], {
      cwd: home,
      env: { HTTPS_PROXY: 'ftp://proxy.example:21' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('set by the HTTPS_PROXY environment variable');
    expect(served).toEqual([]);
  });
});

describe('without a proxy', () => {
  it('--debug says that none is used, and the proxy sees nothing', async () => {
    const run = await runCli(['query', '--url', server.url, '--instrument', 'mag', '--debug'], { cwd: home });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('debug: proxy: none');
    expect(proxied).toEqual([]);
  });
});
