/**
 * Two processes downloading the same file (issue 19, point 7): the second, on a terminal 80 columns wide, shows
 * "waiting for process N that is downloading the same file" while the first holds it, then fetches it once the first stops.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  spawnCli,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';

const SCRIPT = linuxOnly("util-linux's script");

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');
const NAME = scienceName('hit', 7);
const PATH = `imap/hit/l1a/2024/01/${NAME}`;
const BYTES = bytesFor(NAME, 3_000_000);

let server: TestServer;
let store: string;
let home: string;
let proxy: Server;
let proxyUrl: string;
let held = false;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  home = await tempDir();
  await putFile(store, NAME, BYTES);
  server = await startServer({ storeDir: store });
  // In front of the server: object bytes stop after the first 200 kB, so a download through it holds the file.
  const upstream = new URL(server.url);
  proxy = createServer((req, res) => {
    const isObject = !/^\/(upload|download|query)(\/|\?|$)/.test(req.url ?? '/');
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!isObject || req.method !== 'GET') return void answer.pipe(res);
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (sent >= 200_000) return;
          res.write(chunk.subarray(0, 200_000 - sent));
          sent += chunk.length;
          if (sent >= 200_000) {
            held = true;
            answer.destroy();
          }
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((done) => proxy?.close(done));
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

// The stalling proxy sits in front of the server's object answers; from a bucket, the bytes come from the store.
describe.skipIf(SCRIPT.missing || !HAS_SCRIPT || ON_BACKENDS)(
  SCRIPT.title('two processes downloading the same file'),
  () => {
    it('the second shows which process it waits for, then fetches the file once the first stops', async () => {
      const first = spawnCli(['download', '--url', proxyUrl, PATH], { cwd: home });
      const firstDone = finished(first, 60_000);
      expect(await waitFor(() => held, 20_000)).toBe(true);

      const command = `stty cols 80 rows 50; exec ${[process.execPath, BIN, 'download', '--url', server.url, PATH].map(quote).join(' ')}`;
      const second = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
        cwd: home,
        env: cleanEnv(home, { TERM: 'xterm' }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      second.stdin?.end();
      let screen = '';
      second.stdout?.on('data', (chunk: Buffer) => {
        screen += chunk.toString('utf8');
      });
      const secondDone = finished(second, 60_000);
      const waiting = `waiting for process ${first.pid} that is downloading the same file`;
      expect(await waitFor(() => screen.includes(waiting), 20_000)).toBe(true);
      // At 80 columns the note is what stays on the line, within the terminal's width.
      const drawn = screen.split(/\r|\n/).find((line) => line.includes(waiting)) ?? '';
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase code draws nothing
      expect(drawn.replace(/\u001b\[[?\d;]*[A-Za-z]/g, '').length).toBeLessThan(80);

      first.kill('SIGINT');
      expect((await firstDone).code).toBe(130);
      expect((await secondDone).code).toBe(0);
      expect((await readFile(join(home, 'data', ...PATH.split('/')))).equals(BYTES)).toBe(true);
    });
  },
);
