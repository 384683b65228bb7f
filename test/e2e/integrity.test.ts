/**
 * Integrity end to end, as users and neighbours meet it: several processes downloading one file, an interrupted
 * download run again, a file that changes while it is uploaded, names too long to store, a data root that
 * cannot take files. Each must end in the right bytes or a clear error.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { appendFile, readdir, readFile, stat } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api.js';
import { mountTmpfs, unmount } from '../helpers/disk.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
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
import { linuxOnly, unixOnly } from '../helpers/platform.js';

const PRLIMIT = linuxOnly('prlimit');
const TMPFS = linuxOnly('tmpfs');
const SIGNALS = unixOnly('SIGINT');

const NAME = scienceName('mag', 3);
const PATH = `imap/mag/l1a/2024/01/${NAME}`;

/**
 * A TCP relay in front of the server that counts the bytes the server sends, and can slow them down so that
 * an interruption lands mid-transfer on loopback.
 */
interface CountingRelay {
  url: string;
  /** Bytes from the server to clients since the last reset. */
  sent: number;
  close(): Promise<void>;
}

async function startRelay(target: URL, bytesPerSecond?: number): Promise<CountingRelay> {
  const sockets = new Set<Socket>();
  const relay: CountingRelay = { url: '', sent: 0, close: async () => undefined };
  const server: Server = createServer((client) => {
    const upstream = createConnection(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      relay.sent += chunk.length;
      if (!client.write(chunk)) upstream.pause();
      if (bytesPerSecond) {
        upstream.pause();
        setTimeout(() => upstream.resume(), Math.ceil((chunk.length / bytesPerSecond) * 1000));
      }
    });
    client.on('drain', () => upstream.resume());
    upstream.on('end', () => client.end());
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address() as { port: number };
  relay.url = `http://127.0.0.1:${address.port}`;
  relay.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => server.close(done));
  };
  return relay;
}

let home: string;
let store: string;
let server: TestServer;

beforeAll(() => assertBuilt());

beforeEach(async () => {
  home = await tempDir();
  store = await tempDir('mission-store-');
  server = await startServer({ storeDir: store });
});

afterEach(async () => {
  await server.stop();
  await cleanup(home);
  await cleanup(store);
});

/** Puts an object in the store and restarts the server, which indexes the store when it starts. */
async function storeObject(body: Buffer): Promise<void> {
  await putFile(store, NAME, body);
  await server.stop();
  server = await startServer({ storeDir: store });
}

const dataFile = () => join(home, 'data', ...PATH.split('/'));

async function leftoversBeside(path: string): Promise<string[]> {
  const folder = join(path, '..');
  if (!existsSync(folder)) return [];
  return (await readdir(folder)).filter((name) => name !== NAME);
}

describe('several processes downloading one file', () => {
  it.each([2, 12])('%i at once all end with the right bytes, and no part is left', async (count) => {
    const body = bytesFor(NAME, 24 * 1024 * 1024);
    await storeObject(body);
    const runs = await Promise.all(
      Array.from({ length: count }, () =>
        finished(spawnCli(['download', PATH, '--url', server.url], { cwd: home }), 120_000),
      ),
    );
    for (const run of runs) {
      expect(run.stderr).not.toMatch(/Error|failed:/);
      expect(run.code).toBe(0);
    }
    expect((await readFile(dataFile())).equals(body)).toBe(true);
    expect(await leftoversBeside(dataFile())).toEqual([]);
    const said = runs.map((run) => (run.stderr.includes('1 downloaded') ? 'downloaded' : 'skipped'));
    expect(said).toContain('downloaded');
  });
});

/** Whether `prlimit` (util-linux) is here to cap the size of files a process may write. */
const HAS_PRLIMIT = spawnSync('prlimit', ['--version'], { stdio: 'ignore' }).status === 0;

describe('a disk that cannot hold the download', () => {
  const OLD = Buffer.from('the copy that was there before, other bytes than the stored ones\n');

  /** Runs `download --force` over a copy already in place, in `dataDir`, while `limit` is applied to the run. */
  async function downloadOverOldCopy(dataDir: string, limit?: (pid: number) => void) {
    const destination = join(dataDir, ...PATH.split('/'));
    mkdirSync(join(destination, '..'), { recursive: true });
    await appendFile(destination, OLD);
    const child = spawnCli(['download', PATH, '--force', '--url', server.url, '--data-dir', dataDir], {
      cwd: home,
    });
    if (limit && child.pid !== undefined) limit(child.pid);
    return { run: await finished(child), destination };
  }

  it.runIf(HAS_PRLIMIT && !PRLIMIT.missing)(
    PRLIMIT.title(
      'a file size limit hit midway (EFBIG) is a clear error; the copy in place is kept, no part left',
    ),
    async () => {
      await storeObject(bytesFor(NAME, 8 * 1024 * 1024));
      // Node ignores SIGXFSZ: a write past the limit fails with EFBIG, as on a file system with a size cap.
      const { run, destination } = await downloadOverOldCopy(join(home, 'data'), (pid) =>
        execFileSync('prlimit', ['--pid', String(pid), `--fsize=${2 * 1024 * 1024}:`]),
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('EFBIG');
      expect(run.stderr).toContain('1 failed;');
      expect(await readFile(destination)).toEqual(OLD);
      expect(await leftoversBeside(destination)).toEqual([]);
    },
  );

  const mount = mountTmpfs('4m');
  afterAll(() => {
    if (mount !== undefined) unmount(mount);
  });

  it.runIf(mount !== undefined && !TMPFS.missing)(
    TMPFS.title(
      'a file larger than the free space (a tmpfs of 4 MiB) is refused before its bytes, saying what it needs and what is free',
    ),
    async () => {
      await storeObject(bytesFor(NAME, 8 * 1024 * 1024));
      const { run, destination } = await downloadOverOldCopy(join(mount as string, 'data'));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /it needs 8\.0 MiB more and the disk has [0-4]\.\d MiB free; nothing was fetched/,
      );
      expect(run.stderr).toContain('Free some space');
      expect(await readFile(destination)).toEqual(OLD);
      expect(await leftoversBeside(destination)).toEqual([]);
    },
  );
});

describe('an interrupted download run again', () => {
  // The relay counts bytes the server sends; from a bucket, the bytes come from the store itself.
  it.skipIf(ON_BACKENDS || SIGNALS.missing)(
    SIGNALS.title('transfers only the missing bytes, counted at the server'),
    async () => {
      const body = bytesFor(NAME, 32 * 1024 * 1024);
      await storeObject(body);
      // Slowed to ~24 MiB/s so that Ctrl-C lands in the middle.
      const relay = await startRelay(new URL(server.url), 24 * 1024 * 1024);
      try {
        // One stream, so that the part on disk is one run of bytes from the start and "missing" is exact: parts
        // fetched in parallel are resumed from the first byte not yet on disk, and the unit tests cover them.
        const child = spawnCli(['download', PATH, '--url', relay.url, '--connections', '1'], { cwd: home });
        const folder = join(dataFile(), '..');
        const partOnDisk = async () => {
          const part = (await leftoversBeside(dataFile())).find((name) => /\.part\.\d+$/.test(name));
          return part ? (await stat(join(folder, part))).size : 0;
        };
        expect(await waitFor(async () => (await partOnDisk()) > 4 * 1024 * 1024, 30_000)).toBe(true);
        child.kill('SIGINT');
        const first = await finished(child);
        expect(first.code).toBe(130);
        expect(first.stderr).toContain('run the same command again to resume');
        const kept = await partOnDisk();
        expect(kept).toBeGreaterThan(4 * 1024 * 1024);
        expect(kept).toBeLessThan(body.length);

        relay.sent = 0;
        const second = await runCli(['download', PATH, '--url', relay.url], { cwd: home, timeoutMs: 60_000 });
        expect(second.code).toBe(0);
        expect(second.stderr).toContain('1 downloaded');
        expect(second.stderr).toContain('verified');
        // The missing bytes and a few KiB of answers and headers: nothing of what was on disk again.
        expect(relay.sent).toBeGreaterThanOrEqual(body.length - kept);
        expect(relay.sent).toBeLessThan(body.length - kept + 64 * 1024);
        expect((await readFile(dataFile())).equals(body)).toBe(true);
        expect(await leftoversBeside(dataFile())).toEqual([]);
      } finally {
        await relay.close();
      }
    },
  );

  it('a download in parallel parts, killed (SIGKILL), resumes with the bytes its record names', async () => {
    const body = bytesFor(NAME, 32 * 1024 * 1024);
    await storeObject(body);
    // Slowed to ~8 MiB/s per connection, 32 MiB/s over 4, so that the kill lands in the middle.
    const relay = await startRelay(new URL(server.url), 8 * 1024 * 1024);
    try {
      const args = ['download', PATH, '--url', relay.url, '--connections', '4', '--part-size', '1'];
      const child = spawnCli(args, { cwd: home });
      const folder = join(dataFile(), '..');
      // Bytes the part's record says are on disk: from the start, and in the parts finished after them.
      const recorded = async () => {
        const name = (await leftoversBeside(dataFile())).find((entry) => /\.part\.\d+\.json$/.test(entry));
        if (!name) return 0;
        try {
          const record = JSON.parse(await readFile(join(folder, name), 'utf8'));
          const parts: Array<[number, number]> = record.parts ?? [];
          return Number(record.written ?? 0) + parts.reduce((sum, [from, to]) => sum + (to - from), 0);
        } catch {
          return 0;
        }
      };
      expect(await waitFor(async () => (await recorded()) >= 8 * 1024 * 1024, 30_000)).toBe(true);
      child.kill('SIGKILL');
      await finished(child);
      const kept = await recorded();
      expect(kept).toBeLessThan(body.length);

      relay.sent = 0;
      const second = await runCli(['download', PATH, '--url', relay.url], { cwd: home, timeoutMs: 60_000 });
      expect(second.code).toBe(0);
      expect(second.stderr).toContain('1 downloaded');
      // At most the bytes the record does not name, and a few KiB of answers and headers per request.
      expect(relay.sent).toBeLessThan(body.length - kept + 256 * 1024);
      expect((await readFile(dataFile())).equals(body)).toBe(true);
      expect(await leftoversBeside(dataFile())).toEqual([]);
    } finally {
      await relay.close();
    }
  });

  it('never trusts a truncated file at the destination: it is checked and replaced', async () => {
    const body = bytesFor(NAME, 100_000);
    await storeObject(body);
    await putFile(join(home, 'data'), NAME, body.subarray(0, 5000));
    const run = await runCli(['download', PATH, '--url', server.url], { cwd: home });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('1 replaced');
    expect((await readFile(dataFile())).equals(body)).toBe(true);
    const again = await runCli(['download', PATH, '--url', server.url], { cwd: home });
    expect(again.stderr).toContain('1 skipped (verified)');
  });
});

describe('uploads', () => {
  // s3rver keeps the bytes of a PUT cut off before its Content-Length (S3 keeps none): the name is then taken.
  it.skipIf(ON_BACKENDS)(
    'a file that grows while it is sent is refused before the store keeps it, and the re-run stores it',
    async () => {
      const path = await putFile(join(home, 'data'), NAME, bytesFor(NAME, 16 * 1024 * 1024));
      const client = createClient({
        url: server.url,
        dataDir: join(home, 'data'),
        env: {},
        configFile: join(home, 'none.json'),
      });
      try {
        let grown = false;
        const [result] = await client.upload(PATH, {
          checksum: false,
          cwd: home,
          onProgress: (event) => {
            if (!grown && event.sent > 0 && !event.done) {
              grown = true;
              void appendFile(path, 'appended while sending');
            }
          },
        });
        expect(result).toMatchObject({ status: 'failed', error: { code: 'E_FILE_CHANGED' } });
        expect(await server.readObject(PATH)).toBeUndefined();
        const [again] = await client.upload(PATH, { checksum: false, cwd: home });
        expect(again?.status).toBe('uploaded');
        expect((await server.readObject(PATH))?.equals(await readFile(path))).toBe(true);
      } finally {
        await client.close();
      }
    },
  );
});

describe('what cannot be stored or written', () => {
  it('refuses a name longer than the layout can store, in one line, before any request', async () => {
    const long = `imap_mag_l1a_${'d'.repeat(220)}_20240101_20240101_v01-00.cdf`;
    const run = await runCli(['download', long, '--url', server.url], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('file names are at most 231 bytes');
  });

  it('says once, before asking the service, that the data root cannot take files, and how to choose another', async () => {
    await putFile(home, NAME, 'a file where the data root should be');
    const blocked = join(home, 'imap', 'mag', 'l1a', '2024', '01', NAME, 'data');
    const run = await runCli(['download', PATH, '--url', server.url, '--data-dir', blocked], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      `Error: Cannot make the data root ${blocked}: ${join(home, 'imap', 'mag', 'l1a', '2024', '01', NAME)} is a file, not a folder.`,
      'Hint: Choose a folder as the data root: pass --data-dir, set MISSION_DATA_DIR, or run `mission-data config set data-dir <folder>`.',
    ]);
  });
});
