/**
 * An upload on a terminal 80 columns wide: Ctrl-C during the upload ends with the summary and 130, and no full
 * bar or text glued to it stays on screen; the MD5 pass before the upload shows its time left.
 */
import { spawn, spawnSync } from 'node:child_process';
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  BIN,
  bytesFor,
  cleanEnv,
  cleanup,
  finished,
  ON_BACKENDS,
  putFile,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';
import { screenText } from '../helpers/screen.js';
import { type ShapingProxy, startShapingProxy } from '../helpers/shaping.js';

const SCRIPT = linuxOnly("util-linux's script");

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');
const MIB = 1024 * 1024;

let server: TestServer;
let proxy: ShapingProxy;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  home = await tempDir();
  server = await startServer({ storeDir: store, apiKeys: ['k'] });
  proxy = await startShapingProxy(server.url, { rate: MIB, linkRate: MIB, delayMs: 2 });
});

afterAll(async () => {
  proxy?.stop();
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** Starts the built command line on a pseudo-terminal 80 columns wide; `output()` is what it received so far. */
function inTerminal(args: readonly string[]) {
  const command = `stty cols 80 rows 50; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: home,
    env: cleanEnv(home, { TERM: 'xterm' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  return { child, done: finished(child, 60_000), output: () => output };
}

describe.skipIf(SCRIPT.missing || !HAS_SCRIPT || ON_BACKENDS)(
  SCRIPT.title('on a terminal at 80 columns'),
  () => {
    it('Ctrl-C during an upload ends with the summary and 130; no bar or glued text stays', async () => {
      const name = scienceName('hi-90', 3, 'l2', 'v01-00');
      const local = await putFile(`${home}/data`, name, bytesFor(name, 16 * MIB));
      const { child, done, output } = inTerminal(['upload', '--url', proxy.url, '--api-key', 'k', local]);
      expect(await waitFor(() => /Uploading 0\/1 .*\d+%/.test(output()), 20_000)).toBe(true);
      // Ctrl-C as a person types it: the terminal sends SIGINT to the command.
      child.stdin?.write('\u0003');
      const run = await done;
      // Nothing draws a bar after the interruption, not even for an instant.
      expect(run.stdout.slice(run.stdout.indexOf('^C'))).not.toMatch(/\[#/);
      // Judged unwrapped: a line longer than the terminal would show as two.
      const screen = screenText(run.stdout, 1000).filter((line) => line !== '^C');
      const context = screen.join('\n');
      expect(run.code, context).toBe(130);
      for (const line of screen) {
        expect(line, context).not.toMatch(/\[#/);
        expect(line, context).not.toMatch(/%.*(Error|failed|Interrupted)/);
        expect(line.length, context).toBeLessThanOrEqual(80);
      }
      expect(screen).toEqual([
        `failed ${name}: interrupted`,
        expect.stringMatching(/^1 failed; 0 B in \d/),
        'Interrupted; run the same command again; files already stored count as done.',
      ]);
    }, 60_000);

    it('the MD5 pass before an upload shows its time left', async () => {
      const name = scienceName('hi-90', 4, 'l2', 'v01-00');
      const local = await putFile(join(home, 'data'), name, '');
      // Large enough that hashing lasts a while; sparse, so it costs no disk.
      await truncate(local, 2 * 1024 * MIB);
      const { child, done, output } = inTerminal(['upload', '--url', proxy.url, '--api-key', 'k', local]);
      const shown = await waitFor(() => /Hashing \(MD5\) 0\/1 .*\d+ s left to hash/.test(output()), 30_000);
      child.stdin?.write('\u0003');
      const run = await done;
      expect(shown, output()).toBe(true);
      expect(run.code).toBe(130);
    }, 60_000);
  },
);
