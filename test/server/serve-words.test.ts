/**
 * What `serve` says when it cannot start, run in-process: two options naming one port, a store that is a file, a
 * host this machine cannot bind; each says what is wrong and which option to change, and no warning comes before
 * a failure to start (the warning of an open store comes once listening: serve.test.ts). Everything listens on
 * 127.0.0.1 but for the hosts refused.
 */
import { existsSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { ExitCode } from '../../src/core/errors.js';
import { startReferenceServer } from '../../src/server/index.js';
import { makeTempDir } from './helpers.js';

const { serve } = await import('../../src/cli/commands/serve.js');
type ServeOptions = Parameters<typeof serve>[0];

let home: string;
let held: Server[] = [];
beforeEach(async () => {
  home = await makeTempDir('mission-serve-words-');
  held = [];
});
afterEach(async () => {
  for (const server of held) await new Promise<void>((done) => server.close(() => done()));
  await rm(home, { recursive: true, force: true });
});

/** A port taken on 127.0.0.1 for the test's length (or freed at once with `free`). */
async function port(free = false): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port: taken } = server.address() as AddressInfo;
  if (free) await new Promise<void>((done) => server.close(() => done()));
  else held.push(server);
  return taken;
}

/** A command's streams, read back as text. */
function commandIO() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const io: CommandIO = { stdout, stderr, stdin: new PassThrough(), signal: new AbortController().signal };
  return { io, stdout: () => out, stderr: () => err };
}

/** `serve` with the declaration's defaults and `options`; rejects as the command does. */
function run(options: Partial<ServeOptions>, io: CommandIO): Promise<number> {
  return serve({ port: 0, host: '127.0.0.1', store: join(home, 'store'), wire: 'envelope', ...options }, io);
}

describe('--port and --metrics-port', () => {
  it('of one port are refused before anything listens: a usage error (exit 2) naming both', async () => {
    const same = await port(true);
    const { io, stderr } = commandIO();
    await expect(run({ port: same, metricsPort: same }, io)).rejects.toMatchObject({
      code: 'E_USAGE',
      exitCode: ExitCode.Usage,
      message: `--port and --metrics-port are both ${same}: give /metrics a port of its own, or leave out --metrics-port to answer /metrics on the API's port.`,
    });
    expect(stderr()).toBe('');
    expect(existsSync(join(home, 'store'))).toBe(false);
    // The library refuses it too, before it opens the store.
    await expect(
      startReferenceServer({ store: join(home, 'lib'), port: same, metricsPort: same }),
    ).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringMatching(/^The metrics port \d+ is the API's port/),
    });
    expect(existsSync(join(home, 'lib'))).toBe(false);
  });

  it('a metrics port in use is named as the metrics port, with the option to change', async () => {
    const taken = await port();
    const { io } = commandIO();
    await expect(run({ metricsPort: taken }, io)).rejects.toMatchObject({
      code: 'E_LISTEN',
      message: `Cannot listen on 127.0.0.1:${taken}: the port is in use.`,
      hint: 'Pick another port with --metrics-port, or --metrics-port 0 for any free one.',
    });
    expect(existsSync(join(home, 'store'))).toBe(false);
  });
});

describe('a store that is a file', () => {
  it.each([[false], [true]])(
    'is named a file, not a folder, never by its errno (--demo: %s)',
    async (demo) => {
      const file = join(home, 'a-file');
      await writeFile(file, 'x');
      const { io, stdout } = commandIO();
      const failed = run({ store: file, demo }, io);
      await expect(failed).rejects.toMatchObject({
        code: 'E_STORE',
        message: `The store ${file} is a file, not a folder.`,
        hint: 'Choose a folder for the store; a missing one is created.',
      });
      await expect(failed).rejects.not.toMatchObject({ message: expect.stringMatching(/EEXIST|ENOTDIR/) });
      expect(stdout()).toBe('');
    },
  );

  it('below a file: names the file in the way', async () => {
    const file = join(home, 'a-file');
    await writeFile(file, 'x');
    const store = join(file, 'store');
    await expect(startReferenceServer({ store })).rejects.toMatchObject({
      code: 'E_STORE',
      message: `Cannot make the store folder ${store}: ${file} is a file, not a folder.`,
    });
  });
});

describe('--host', () => {
  it.each([
    [
      '192.0.2.1',
      /^Cannot listen on 192\.0\.2\.1: it is not an address of this machine \(EADDRNOTAVAIL\)\.$/,
    ],
    [
      '256.1.1.1',
      /^Cannot listen on 256\.1\.1\.1: it is neither an address nor a host name that resolves \((ENOTFOUND|EAI_AGAIN)\)\.$/,
    ],
    [
      'no-such-host.invalid',
      /^Cannot listen on no-such-host\.invalid: it is neither an address nor a host name that resolves \((ENOTFOUND|EAI_AGAIN)\)\.$/,
    ],
  ])(
    '%s is named as the problem, with no warning before the failure and no folder made',
    async (host, message) => {
      const { io, stdout, stderr } = commandIO();
      const failed = run({ host }, io);
      await expect(failed).rejects.toMatchObject({
        code: 'E_LISTEN',
        message: expect.stringMatching(message),
        hint: 'Give --host an address of this machine: 127.0.0.1 (the default) for this machine only, 0.0.0.0 for every interface.',
      });
      await expect(failed).rejects.not.toMatchObject({ hint: expect.stringContaining('1024') });
      expect(stdout()).toBe('');
      expect(stderr()).toBe('');
      expect(await readdir(home)).toEqual([]);
    },
  );
});
