/** `mission-data serve`, spawned from the built bin: the Listening line, request logs, demo data, clean stop. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFileNames } from '../../src/server/demo-archive.js';
import { selfSignedCertificate } from '../helpers/certificate.js';
import { runCli, type ServeProcess, spawnServe } from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';
import { eventually, makeTempDir, outcomeOf, rawRequest } from './helpers.js';

const SIGNALS = unixOnly('SIGTERM and SIGINT');

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/mission-data.js');

type Served = ServeProcess;

let home: string;
let children: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(join(root, 'dist/cli/commands/serve.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
});
beforeEach(async () => {
  home = await makeTempDir('mission-serve-');
  children = [];
});
afterEach(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(home, { recursive: true, force: true });
});

/** Spawns `serve` and resolves once it printed its Listening line on 127.0.0.1. */
function serve(args: string[]): Promise<Served> {
  return spawnServe(args, { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home }, onChild: keep });
}

/** Spawns `serve` on any host and resolves once it printed its Listening line (whatever address it names). */
function serveAnywhere(args: string[]): Promise<Served> {
  return spawnServe(['--port', '0', ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home },
    anyHost: true,
    onChild: keep,
  });
}

/** Keeps a serve process for the SIGKILL after each test. */
function keep(child: ChildProcess): void {
  children.push(child);
}

describe.skipIf(SIGNALS.missing)(SIGNALS.title('mission-data serve'), () => {
  it('prints one Listening line with the real port, logs requests on stderr, and exits 0 on SIGTERM', async () => {
    const store = join(home, 'store');
    const served = await serve(['--port', '0', '--store', store]);
    expect(served.url).not.toMatch(/:0$/);
    const result = await rawRequest(served.url, '/query?instrument=mag');
    expect(outcomeOf(result, 'envelope')).toEqual({ statusCode: 200, body: [] });
    await rawRequest(
      served.url,
      '/objects/imap/mag/l1a/2025/01/x.cdf?X-Method=GET&X-Expires=1&X-Signature=secret',
    );
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stdout()).toBe(`Listening on ${served.url}\n`);
    expect(served.stderr()).toMatch(/^GET \/query\?instrument=mag 200 \d+\.\dms id=[0-9a-f]{16}$/m);
    // Object URLs are logged without their credentials.
    expect(served.stderr()).toMatch(
      /^GET \/objects\/imap\/mag\/l1a\/2025\/01\/x\.cdf 403 \d+\.\dms id=[0-9a-f]{16}$/m,
    );
    expect(served.stderr()).not.toContain('X-Signature');
    expect(existsSync(store)).toBe(true);
  });

  it('says what it runs on, one fact a line within 80 columns: store, index, wire, dialect, access', async () => {
    const served = await serve(['--port', '0', '--store', 'store', '--demo']);
    expect(await eventually(async () => served.stderr().includes('Stop with Ctrl-C.'))).toBe(true);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    const count = demoFileNames().length;
    expect(served.stderr()).toBe(
      `Filled ${join(home, 'store')} with a demo archive of ${count} files.\n` +
        `Store: ${join(home, 'store')} (${count} files)\n` +
        'Index: memory\n' +
        'Wire: envelope\n' +
        "Dialect both: the spec's routes, and today's /api-key/ and /authorized/ ones.\n" +
        'Access: uploads need no API key; /authorized/ routes refuse every request.\n' +
        'Stop with Ctrl-C.\n',
    );
    for (const line of served.stderr().split('\n').slice(2)) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('on every interface (--host 0.0.0.0) it names an address to use, not 0.0.0.0', async () => {
    const served = await serveAnywhere([
      '--host',
      '0.0.0.0',
      '--api-key',
      'k',
      '--token',
      't',
      '--store',
      's',
    ]);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.stdout()).toBe(`Listening on ${served.url}\n`);
    expect((await rawRequest(served.url, '/query?instrument=mag')).status).toBe(200);
    expect(await eventually(async () => served.stderr().includes('Stop with Ctrl-C.'))).toBe(true);
    expect(served.stderr()).toContain(
      'Access: uploads need an API key; /authorized/ routes take 1 bearer token.\n' +
        "Bound to 0.0.0.0 (all interfaces): use this machine's name or address.\n",
    );
    for (const line of served.stderr().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
  });

  it('stops on SIGINT too; --quiet logs no requests', async () => {
    const served = await serve(['--port', '0', '--store', join(home, 'store'), '--quiet']);
    await rawRequest(served.url, '/query?instrument=mag');
    served.child.kill('SIGINT');
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toBe('');
  });

  it('SIGTERM drains: an upload under way finishes, new requests get 503 and /health says draining, exit 0', async () => {
    const store = join(home, 'draining');
    const served = await serve(['--port', '0', '--store', store, '--demo', '--drain-timeout', '10']);
    const name = 'imap_mag_l2_norm_20250302_20250302_v01-00.cdf';
    const putUrl = new URL(
      outcomeOf(await rawRequest(served.url, `/upload/${name}`), 'envelope').body as string,
    );
    const size = 1024 * 1024;
    const upload = httpRequest({
      host: putUrl.hostname,
      port: putUrl.port,
      path: `${putUrl.pathname}${putUrl.search}`,
      method: 'PUT',
      agent: false,
      headers: { 'Content-Length': String(size) },
    });
    const uploadEnded = new Promise<string>((done) => {
      upload.on('response', (res) => done(`answered ${res.statusCode}`));
      upload.on('error', () => done('connection closed'));
    });
    upload.write(Buffer.alloc(size / 2, 'x'));
    expect(await eventually(async () => (await readdir(join(store, '.incoming'))).length === 1)).toBe(true);
    const signalled = Date.now();
    served.child.kill('SIGTERM');
    expect(await eventually(async () => served.stderr().includes('Draining: 1 request under way'))).toBe(
      true,
    );
    const health = await rawRequest(served.url, '/health');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'draining' });
    const refused = await rawRequest(served.url, '/query?instrument=mag');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.connection).toBe('close');
    expect(outcomeOf(refused, 'envelope').body).toMatch(/this server is stopping; try again/);
    upload.end(Buffer.alloc(size / 2, 'x'));
    expect(await uploadEnded).toBe('answered 200');
    expect(await served.exit).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(existsSync(join(store, 'imap/mag/l2/2025/03', name))).toBe(true);
  });

  it('SIGTERM during an upload that stalls cuts it at the drain bound, exits 0 and leaves no partial object', async () => {
    const store = join(home, 'busy');
    const served = await serve(['--port', '0', '--store', store, '--demo', '--drain-timeout', '1']);
    const name = 'imap_mag_l2_norm_20250301_20250301_v01-00.cdf';
    const putUrl = new URL(
      outcomeOf(await rawRequest(served.url, `/upload/${name}`), 'envelope').body as string,
    );
    const upload = httpRequest({
      host: putUrl.hostname,
      port: putUrl.port,
      path: `${putUrl.pathname}${putUrl.search}`,
      method: 'PUT',
      agent: false,
      headers: { 'Content-Length': String(8 * 1024 * 1024) },
    });
    const uploadEnded = new Promise<string>((done) => {
      upload.on('response', (res) => done(`answered ${res.statusCode}`));
      upload.on('error', () => done('connection closed'));
    });
    upload.write(Buffer.alloc(64 * 1024, 'x'));
    const incoming = join(store, '.incoming');
    expect(await eventually(async () => (await readdir(incoming)).length === 1)).toBe(true);
    const signalled = Date.now();
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    const tookMs = Date.now() - signalled;
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect(tookMs).toBeLessThan(4_000);
    expect(await uploadEnded).toBe('connection closed');
    expect(await readdir(incoming)).toEqual([]);
    expect(existsSync(join(store, 'imap/mag/l2/2025/03'))).toBe(false);
    expect(served.stderr()).toMatch(
      /^PUT \/objects\/imap\/mag\/l2\/2025\/03\/\S+ 499 \(cut off when the server stopped\)/m,
    );
    expect(served.stderr()).toContain('Stopped: 1 request cut off by the drain bound.');
  });

  it('a second signal during the drain exits at once', async () => {
    const store = join(home, 'twice');
    const served = await serve(['--port', '0', '--store', store, '--demo', '--drain-timeout', '60']);
    const name = 'imap_mag_l2_norm_20250303_20250303_v01-00.cdf';
    const putUrl = new URL(
      outcomeOf(await rawRequest(served.url, `/upload/${name}`), 'envelope').body as string,
    );
    const upload = httpRequest({
      host: putUrl.hostname,
      port: putUrl.port,
      path: `${putUrl.pathname}${putUrl.search}`,
      method: 'PUT',
      agent: false,
      headers: { 'Content-Length': String(1024 * 1024) },
    });
    upload.on('error', () => undefined);
    upload.write(Buffer.alloc(1024, 'x'));
    expect(await eventually(async () => (await readdir(join(store, '.incoming'))).length === 1)).toBe(true);
    served.child.kill('SIGTERM');
    expect(await eventually(async () => served.stderr().includes('Draining: 1 request under way'))).toBe(
      true,
    );
    const signalled = Date.now();
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(143);
    expect(Date.now() - signalled).toBeLessThan(2_000);
  });

  it('--demo fills an empty store and answers queries from it', async () => {
    const store = join(home, 'demo');
    const served = await serve(['--port', '0', '--store', store, '--demo', '--wire', 'gateway']);
    const result = await rawRequest(served.url, '/query?instrument=mag&data_level=l1a&version=latest');
    expect(result.status).toBe(200);
    const records = JSON.parse(result.text) as Array<{ file_path: string; version: string }>;
    expect(records.length).toBeGreaterThan(5);
    expect(records.find((record) => record.file_path.includes('norm-mago_20250101'))?.version).toBe('v02-00');
    const ancillary = JSON.parse((await rawRequest(served.url, '/query?table=ancillary')).text) as unknown[];
    expect(ancillary.length).toBeGreaterThanOrEqual(3);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toContain(
      `Filled ${store} with a demo archive of ${demoFileNames().length} files.`,
    );
  });

  it('--demo keeps a store that is not empty, and says so', async () => {
    const store = join(home, 'kept');
    await mkdir(store);
    await writeFile(join(store, 'notes.txt'), 'mine');
    const served = await serve(['--port', '0', '--store', store, '--demo']);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toContain(
      `Store ${store} is not empty: keeping its files and adding no demo archive.`,
    );
    expect(await readdir(store)).toEqual(expect.arrayContaining(['notes.txt']));
    expect(existsSync(join(store, 'imap'))).toBe(false);
  });

  it('--api-key (repeatable) guards uploads; --wire envelope-200 answers HTTP 200 with the outcome inside', async () => {
    const served = await serve([
      '--port',
      '0',
      '--store',
      join(home, 'keyed'),
      '--api-key',
      'k-one',
      '--api-key',
      'k-two',
      '--wire',
      'envelope-200',
    ]);
    const name = 'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
    const without = await rawRequest(served.url, `/upload/${name}`);
    expect(without.status).toBe(200);
    expect(outcomeOf(without, 'envelope-200').statusCode).toBe(401);
    const wrong = await rawRequest(served.url, `/upload/${name}`, { headers: { 'X-api-key': 'k-three' } });
    expect(outcomeOf(wrong, 'envelope-200').statusCode).toBe(403);
    for (const key of ['k-one', 'k-two']) {
      const right = await rawRequest(served.url, `/upload/${name}`, { headers: { 'X-api-key': key } });
      expect(outcomeOf(right, 'envelope-200').statusCode).toBe(200);
    }
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stdout()).toBe(`Listening on ${served.url}\n`);
    expect(served.stderr()).toContain('Wire: envelope-200\n');
    expect(served.stderr()).toContain('Access: uploads need an API key;');
    // The key travels in a header and is never logged.
    expect(served.stderr()).not.toContain('k-one');
    expect(served.stderr()).toMatch(new RegExp(`^GET /upload/${name} 200 `, 'm'));
  });

  it.each([[[]], [['--demo']]])(
    'a store that is a file (%j) is a clear error with exit 1 and nothing on stdout',
    async (extra) => {
      const file = join(home, 'a-file');
      await writeFile(file, 'x');
      const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--store', file, ...extra], {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home },
      });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const status = await new Promise<number | null>((done) => child.on('close', done));
      expect(status).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toBe(
        `Error: The store ${file} is a file, not a folder.\nHint: Choose a folder for the store; a missing one is created.\n`,
      );
    },
  );

  it.each([
    ['gs://bucket/x', 'names no known kind of store (gs:)'],
    ['file://x', 'names no known kind of store (file:)'],
    ['s3:/x', 'is not of the form s3://BUCKET[/PREFIX]'],
  ])(
    '--store %s (a scheme no backend has, or not of its form) is refused with exit 2 and no folder',
    async (store, why) => {
      const run = await runCli(['serve', '--port', '0', '--store', store], {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home },
      });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `Error: --store ${JSON.stringify(store)} ${why}; give one of: a folder, s3://BUCKET[/PREFIX].\n`,
      );
      expect(await readdir(home)).toEqual([]);
    },
  );

  it('a location with a colon but no scheme is a folder: ./a:b', async () => {
    const served = await serve(['--port', '0', '--store', './a:b', '--quiet']);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(existsSync(join(home, 'a:b'))).toBe(true);
  });

  it('TLS files that do not fit are named as the files, never as a bug: swapped, or of another key', async () => {
    const make = (name: string) => selfSignedCertificate(home, `${name}-`);
    await Promise.all([make('a'), make('b')]);
    const run = (cert: string, key: string) =>
      runCli(['serve', '--port', '0', '--store', 's', '--tls-cert', cert, '--tls-key', key], {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home },
      });
    const swapped = await run('a-key.pem', 'a-cert.pem');
    expect(swapped.code).toBe(2);
    expect(swapped.stderr).toBe(
      'Error: The TLS certificate a-key.pem is not a PEM certificate but a private key; were --tls-cert and --tls-key swapped?\n',
    );
    const other = await run('a-cert.pem', 'b-key.pem');
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      'Error: The TLS key b-key.pem is not the private key of the certificate a-cert.pem.\n',
    );
    expect(existsSync(join(home, 's'))).toBe(false);
  });

  it('a port in use is a clear error with exit 1', async () => {
    const first = await serve(['--port', '0', '--store', join(home, 'a')]);
    const port = new URL(first.url).port;
    const child = spawn(process.execPath, [bin, 'serve', '--port', port, '--store', join(home, 'b')], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home },
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code).toBe(1);
    expect(stderr).toContain(`Error: Cannot listen on 127.0.0.1:${port}: the port is in use.`);
    // The port is checked before the store folder is made, with or without a demo archive to write.
    expect(existsSync(join(home, 'b'))).toBe(false);
    const demo = spawn(
      process.execPath,
      [bin, 'serve', '--demo', '--port', port, '--store', join(home, 'c')],
      {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home },
      },
    );
    children.push(demo);
    expect(await new Promise<number | null>((done) => demo.on('close', done))).toBe(1);
    expect(existsSync(join(home, 'c'))).toBe(false);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
  });

  it('warns when it listens beyond this machine without an API key, even with --quiet', async () => {
    const warning =
      /^Warning: on 0\.0\.0\.0 without --api-key, anyone who reaches this machine can upload\.\nGive --api-key KEY to guard uploads\.\n/m;
    const open = await serveAnywhere(['--host', '0.0.0.0', '--quiet', '--store', join(home, 'open')]);
    expect(open.stderr()).toMatch(warning);
    const guarded = await serveAnywhere(['--host', '0.0.0.0', '--api-key', 'k', '--store', join(home, 'g')]);
    expect(guarded.stderr()).not.toMatch(/Warning/);
    const local = await serve(['--port', '0', '--store', join(home, 'l')]);
    expect(local.stderr()).not.toMatch(/Warning/);
    for (const served of [open, guarded, local]) served.child.kill('SIGTERM');
    expect(await Promise.all([open.exit, guarded.exit, local.exit])).toEqual([0, 0, 0]);
  });
});
