/**
 * Transfers through the built command line against the reference server in each wire mode: skipping and
 * replacing, many files at once, dropped connections, interruption, exit statuses, environment variables and
 * stdin input.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WIRE_MODES } from '../../src/server/wire.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  listFiles,
  ON_BACKENDS,
  putFile,
  runCli,
  scienceName,
  spawnCli,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';

const SIGNALS = unixOnly('SIGINT and SIGTERM');

const SMALL = scienceName('hit', 1);
const SMALL_PATH = `imap/hit/l1a/2024/01/${SMALL}`;
const LARGE = scienceName('codice', 2, 'l2');
const LARGE_PATH = `imap/codice/l2/2024/01/${LARGE}`;
const SMALL_BYTES = bytesFor(SMALL, 5000);
const LARGE_BYTES = bytesFor(LARGE, 3 * 1024 * 1024 + 11);
/** Files of the many-files test: 200 of a few KiB. */
const MANY = Array.from({ length: 200 }, (_, index) => scienceName('lo', index + 1, 'l1b'));

let home: string;

beforeAll(() => assertBuilt());

beforeEach(async () => {
  home = await tempDir();
});

afterEach(async () => {
  await cleanup(home);
});

const local = (...parts: string[]) => join(home, 'data', ...parts);

describe('bad input', () => {
  it.each([
    [['download', 'imap_mag_l1a_norm_20240101_20240101_v1.cdf'], 'Invalid version format'],
    [['download', '../../etc/passwd'], 'is not inside the data root'],
    [['download'], 'Nothing to download'],
    [['download', SMALL, '--instrument', 'hit'], 'not both'],
    [['download', '--instrument', 'hit', '--start-date', '2024-01-01'], 'YYYYMMDD'],
    [['download', '--instrument', 'jupiter'], 'Invalid instrument'],
    [['download', '--concurrency', '0', SMALL], '--concurrency must be a whole number from 1 to 64'],
    [['upload', 'notes.txt'], 'Invalid filename notes.txt'],
    [['upload', 'imap_hit_l1a_x_20240101_20240101_v01-00.pkts'], 'Invalid extension'],
  ])('exits 2 before any request: %j', async (args, message) => {
    // An unreachable URL: any request would fail differently (exit 1).
    const result = await runCli([...args, '--url', 'http://127.0.0.1:9'], { cwd: home });
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(2);
    expect(await listFiles(home)).toEqual([]);
  });
});

describe('an unreachable service', () => {
  it('asks once, fails that file with the reason and a hint, and sums up the rest in one line', async () => {
    const names = Array.from({ length: 40 }, (_, index) => scienceName('mag', index + 1));
    const result = await runCli(['download', '-', '--url', 'http://127.0.0.1:9'], {
      cwd: home,
      input: `${names.join('\n')}\n`,
    });
    expect(result.code).toBe(1);
    // The first file asks alone; once it is refused, no other file asks.
    expect(result.stderr).toContain('Stopped: 39 files not started, as the service could not be reached.');
    expect(result.stderr.match(/connection refused/g)).toHaveLength(1);
    expect(result.stderr.match(/^Hint: /gm)).toHaveLength(1);
    expect(await listFiles(home)).toEqual([]);
  });
});

describe.each(WIRE_MODES)('with the server in wire mode %s', (wire) => {
  let store: string;
  let server: TestServer;

  beforeAll(async () => {
    store = await tempDir('mission-store-');
    await putFile(store, SMALL, SMALL_BYTES);
    await putFile(store, LARGE, LARGE_BYTES);
    for (const name of MANY) await putFile(store, name, bytesFor(name, 2048 + (name.length % 7) * 300));
    server = await startServer({ storeDir: store, wire });
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup(store);
  });

  describe('download', () => {
    it('skips a verified file, replaces one edited since, and fetches everything again with --force', async () => {
      const first = await runCli(['download', '--url', server.url, SMALL], { cwd: home });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain(`downloaded ${SMALL_PATH}`);
      expect(first.stderr).toContain('1 downloaded;');
      expect(first.stderr).toContain("The file was verified against the store's checksum.\n");

      const second = await runCli(['download', '--url', server.url, SMALL], { cwd: home });
      expect(second.code).toBe(0);
      expect(second.stderr).not.toContain(SMALL_PATH);
      expect(second.stderr).toContain('1 skipped (verified);');

      await writeFile(local(SMALL_PATH), 'edited locally');
      const third = await runCli(['download', '--url', server.url, SMALL], { cwd: home });
      expect(third.code).toBe(0);
      expect(third.stderr).toContain(`replaced ${SMALL_PATH}`);
      expect((await readFile(local(SMALL_PATH))).equals(SMALL_BYTES)).toBe(true);

      const forced = await runCli(['download', '--url', server.url, '--force', SMALL_PATH], { cwd: home });
      expect(forced.code).toBe(0);
      expect(forced.stderr).toContain('1 replaced;');
      expect((await readFile(local(SMALL_PATH))).equals(SMALL_BYTES)).toBe(true);
    });

    it('downloads 200 files with --concurrency 16, paths read line by line from stdin', async () => {
      const input = `${MANY.slice(0, 100).join('\n')}\n\n  \n${MANY.slice(100).join('\r\n')}\n`;
      const result = await runCli(['download', '--url', server.url, '--concurrency', '16', '-q', '-'], {
        cwd: home,
        input,
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const files = await listFiles(local());
      expect(files).toHaveLength(200);
      for (const name of MANY) {
        const path = `imap/lo/l1b/${files
          .find((file) => file.endsWith(name))
          ?.split('/')
          .slice(3, 5)
          .join('/')}/${name}`;
        expect((await readFile(local(path))).equals(await readFile(join(store, path)))).toBe(true);
      }
    });

    it('sends the service and object requests of 200 files over kept-alive connections', async () => {
      const result = await runCli(
        ['download', '--url', server.url, '--concurrency', '16', '--debug', '-q', '-'],
        { cwd: home, input: MANY.join('\n') },
      );
      expect(result.code).toBe(0);
      const line = /connections: (\d+) requests over (\d+) connections \((\d+) on a kept-alive one\)/.exec(
        result.stderr,
      );
      expect(line).not.toBeNull();
      const [requests, connections, reused] = (line as RegExpExecArray).slice(1).map(Number);
      // One /download and one object GET per file (the query of a page of results is not needed here).
      expect(requests).toBe(400);
      // About the transfers and the look-ups running ahead of them at once, each on a connection of its own (a
      // few more where the store is another host, or a kept connection closed meanwhile); far fewer than requests.
      expect(connections).toBeLessThanOrEqual(48);
      expect(reused).toBe((requests as number) - (connections as number));
    });

    it('reads a JSON array of paths from stdin', async () => {
      const result = await runCli(['download', '--url', server.url, '-'], {
        cwd: home,
        input: JSON.stringify([SMALL_PATH, SMALL]),
      });
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('1 downloaded');
      expect(await listFiles(local())).toEqual([SMALL_PATH]);
    });

    it('exits 1 naming each missing file with its reason, and still downloads the others', async () => {
      const missing = scienceName('idex', 9);
      const result = await runCli(['download', '--url', server.url, missing, SMALL], { cwd: home });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`failed .*${missing}: the archive holds no such file \\(404 from GET .*\\)`),
      );
      // Printed once, when it happened: no closing list repeats it.
      expect(result.stderr.split('\n').filter((line) => line.includes(missing))).toHaveLength(1);
      expect(await listFiles(local())).toEqual([SMALL_PATH]);
    });

    it('honours MISSION_DATA_DIR and MISSION_DATA_ACCESS_URL', async () => {
      const result = await runCli(['download', SMALL], {
        cwd: home,
        env: { MISSION_DATA_DIR: join(home, 'mission-root'), MISSION_DATA_ACCESS_URL: server.url },
      });
      expect(result.code).toBe(0);
      expect(await listFiles(join(home, 'mission-root'))).toEqual([SMALL_PATH]);
    });

    it('falls back to IMAP_DATA_DIR and IMAP_DATA_ACCESS_URL', async () => {
      const result = await runCli(['download', SMALL], {
        cwd: home,
        env: { IMAP_DATA_DIR: 'imap-root', IMAP_DATA_ACCESS_URL: server.url },
      });
      expect(result.code).toBe(0);
      expect(await listFiles(join(home, 'imap-root'))).toEqual([SMALL_PATH]);
    });
  });

  describe('upload', () => {
    it('finds files in MISSION_DATA_DIR and reports files the store holds already', async () => {
      const name = scienceName('glows', 20, 'l2');
      await putFile(join(home, 'root'), name, bytesFor(name, 10_000));
      const env = { MISSION_DATA_DIR: join(home, 'root'), MISSION_DATA_ACCESS_URL: server.url };
      const first = await runCli(['upload', name.replace(/^/, 'imap/glows/l2/2024/01/')], { cwd: home, env });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain('1 uploaded');
      const second = await runCli(['upload', `imap/glows/l2/2024/01/${name}`, SMALL], { cwd: home, env });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain('1 already stored (same bytes)');
      expect(second.stderr).toContain('File not found');
      expect(second.stderr).toContain('<root>/<mission>/<instrument>/<data_level>/<year>/<month>/<filename>');
    });

    it('stores the same bytes with --no-checksum', async () => {
      const name = scienceName('glows', 21, 'l2');
      const bytes = bytesFor(name, 300_000);
      await putFile(join(home, 'data'), name, bytes);
      const result = await runCli(
        ['upload', `imap/glows/l2/2024/01/${name}`, '--no-checksum', '--url', server.url],
        {
          cwd: home,
        },
      );
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('1 uploaded');
      expect(await server.readObject(`imap/glows/l2/2024/01/${name}`)).toEqual(bytes);
    });

    it('sends the API key from --api-key, MISSION_API_KEY or IMAP_API_KEY, and hints at it when missing', async () => {
      const guarded = await startServer({ wire, apiKeys: ['key-123'] });
      try {
        const names = [1, 2, 3, 4].map((day) => scienceName('swapi', day, 'l2'));
        for (const name of names) await putFile(join(home, 'data'), name, bytesFor(name, 1000));
        const path = (name: string) => `imap/swapi/l2/2024/01/${name}`;
        const [first, second, third, fourth] = names as [string, string, string, string];

        const without = await runCli(['upload', '--url', guarded.url, path(first)], { cwd: home });
        expect(without.code).toBe(1);
        expect(without.stderr).toMatch(/: 401 /);
        expect(without.stderr).toMatch(
          /Hint: Uploads need a valid API key: pass --api-key, set MISSION_API_KEY/,
        );

        const byFlag = await runCli(['upload', '--url', guarded.url, '--api-key', 'key-123', path(first)], {
          cwd: home,
        });
        expect(byFlag.code).toBe(0);
        const byEnv = await runCli(['upload', '--url', guarded.url, path(second)], {
          cwd: home,
          env: { MISSION_API_KEY: 'key-123', IMAP_API_KEY: 'wrong' },
        });
        expect(byEnv.code).toBe(0);
        const byFallback = await runCli(['upload', '--url', guarded.url, path(third)], {
          cwd: home,
          env: { IMAP_API_KEY: 'key-123' },
        });
        expect(byFallback.code).toBe(0);
        const wrong = await runCli(['upload', '--url', guarded.url, path(fourth)], {
          cwd: home,
          env: { MISSION_API_KEY: 'wrong' },
        });
        expect(wrong.code).toBe(1);
        expect(wrong.stderr).toMatch(/: 403 /);
        expect(await guarded.objects()).toEqual([first, second, third].map(path).sort());
      } finally {
        await guarded.stop();
      }
    });
  });

  /** A proxy in front of the reference server that misbehaves on object GETs, for the first one or all. */
  interface FaultyProxy {
    url: string;
    /** Range header of every object GET ('' without one). */
    ranges: string[];
    /** True once an object answer has been held back. */
    stalled: boolean;
    close(): Promise<void>;
  }

  async function startProxy(
    target: string,
    fault: { cutAfter?: number; stallAfter?: number },
  ): Promise<FaultyProxy> {
    const upstream = new URL(target);
    const state = { ranges: [] as string[], stalled: false };
    let objectAnswers = 0;
    const proxy: Server = createServer((req, res) => {
      const isObject = !/^\/(upload|download|query)(\/|\?|$)/.test(req.url ?? '/');
      if (isObject && req.method === 'GET') state.ranges.push(req.headers.range ?? '');
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
          const index = isObject && req.method === 'GET' ? objectAnswers++ : -1;
          const limit = fault.cutAfter !== undefined && index === 0 ? fault.cutAfter : fault.stallAfter;
          if (index < 0 || limit === undefined) {
            answer.pipe(res);
            return;
          }
          let sent = 0;
          answer.on('data', (chunk: Buffer) => {
            if (sent + chunk.length < limit) {
              sent += chunk.length;
              res.write(chunk);
              return;
            }
            res.write(chunk.subarray(0, limit - sent), () => {
              // A moment after the bytes: a reset may discard bytes the client has not read yet (a loaded
              // machine is slow to read them), and the test counts on them.
              if (fault.cutAfter !== undefined) setTimeout(() => res.socket?.destroy(), 50);
              else state.stalled = true;
            });
            sent = limit;
            answer.destroy();
          });
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    return Object.assign(state, {
      url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      close: async () => {
        proxy.closeAllConnections();
        await new Promise((done) => proxy.close(done));
      },
    });
  }

  // The proxy sits in front of the server's object answers; a bucket's downloads go to the store itself.
  describe.skipIf(ON_BACKENDS)('download through an unreliable connection', () => {
    it('resumes with Range when the connection drops mid-file', async () => {
      const proxy = await startProxy(server.url, { cutAfter: 1_000_000 });
      try {
        const result = await runCli(['download', '--url', proxy.url, LARGE], { cwd: home });
        expect(result.code).toBe(0);
        expect((await readFile(local(LARGE_PATH))).equals(LARGE_BYTES)).toBe(true);
        expect(proxy.ranges).toHaveLength(2);
        expect(proxy.ranges[0]).toBe('');
        const resumedAt = Number(/^bytes=(\d+)-$/.exec(proxy.ranges[1] ?? '')?.[1]);
        expect(resumedAt).toBeGreaterThan(0);
        expect(resumedAt).toBeLessThanOrEqual(1_000_000);
        expect(await listFiles(local())).toEqual([LARGE_PATH]);
      } finally {
        await proxy.close();
      }
    });

    it.skipIf(SIGNALS.missing).each(['SIGINT', 'SIGTERM'] as const)(
      SIGNALS.title('%s mid-download leaves only its part, to resume, and no file'),
      async (signal) => {
        const proxy = await startProxy(server.url, { stallAfter: 200_000 });
        try {
          const child = spawnCli(['download', '--url', proxy.url, LARGE], { cwd: home });
          const done = finished(child, 30_000);
          const part = () => local(`${LARGE_PATH}.part.${child.pid}`);
          expect(await waitFor(() => proxy.stalled && existsSync(part()), 20_000)).toBe(true);
          // The proxy has sent its bytes; give the client a moment to take them in (none held: nothing to keep).
          await new Promise((resolve) => setTimeout(resolve, 300));
          child.kill(signal);
          const result = await done;
          // 128 + the signal's number, as shells report it.
          expect(result.code).toBe(signal === 'SIGTERM' ? 143 : 130);
          expect(result.stderr).toContain('Cancelled');
          expect(await listFiles(home)).toEqual([
            `data/${LARGE_PATH}.part.${child.pid}`,
            `data/${LARGE_PATH}.part.${child.pid}.json`,
          ]);
        } finally {
          await proxy.close();
        }
      },
    );
  });
});
