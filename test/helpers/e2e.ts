/**
 * End-to-end helpers: run the built command line with a clean environment and its own configuration folder,
 * start the reference server on a temporary store, and put files where the naming rules say they belong.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { crc32 } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { parsePathOrName } from '../../src/naming/names.js';
import {
  type Dialect,
  type ReferenceServer,
  type RequestLogEntry,
  startReferenceServer,
  type WireMode,
} from '../../src/server/index.js';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../..');
/** The command line as shipped. */
export const BIN = join(ROOT, 'bin/mission-data.js');

/** The outcome of one run of the command line. */
export interface CliRun {
  /** Exit status; null when ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** How to run the command line. */
export interface CliOptions {
  /** Working directory (also HOME, with XDG_CONFIG_HOME below it, unless `home` is given). */
  cwd: string;
  /** Home folder; default `cwd`. Its `config` sub-folder is the configuration folder. */
  home?: string;
  /** Extra environment variables on top of the clean environment. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (stdin is empty otherwise). */
  input?: string;
  /** Kills the process (SIGKILL) after this long, so a hung run fails the test instead of blocking it. */
  timeoutMs?: number;
  /** The bin to run; default the repository's `bin/mission-data.js`. */
  bin?: string;
  /** The Node that runs it; default the one running the tests. */
  node?: string;
}

/** Throws unless `npm run build` has produced dist/. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
}

/**
 * What Windows needs of the machine's environment: without `SystemRoot` Node cannot open a socket or draw random
 * bytes, without `TEMP`/`TMP` it has no temporary folder, without `PATHEXT`/`ComSpec` no command is found or run.
 * None of them is set on Linux or macOS.
 */
const SYSTEM_VARIABLES = ['SystemRoot', 'TEMP', 'TMP', 'PATHEXT', 'ComSpec'] as const;

/**
 * The clean environment a run gets: no MISSION_* or IMAP_* variables of the machine running the tests, and its
 * own home on every system (`USERPROFILE`, `APPDATA` and `LOCALAPPDATA` are the home and configuration folders of
 * Windows: they point below `home` when the machine has them, never at the real user's).
 */
export function cleanEnv(
  home: string,
  extra: Record<string, string> = {},
  machine: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: machine.PATH ?? machine.Path ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
  };
  for (const name of SYSTEM_VARIABLES) {
    const value = machine[name];
    if (value !== undefined) env[name] = value;
  }
  const perUser = {
    USERPROFILE: home,
    APPDATA: join(home, 'AppData', 'Roaming'),
    LOCALAPPDATA: join(home, 'AppData', 'Local'),
  };
  for (const [name, value] of Object.entries(perUser)) if (machine[name] !== undefined) env[name] = value;
  return { ...env, ...extra };
}

/** Starts `node bin/mission-data.js ...args` without waiting for it. */
export function spawnCli(args: readonly string[], options: CliOptions): ChildProcess {
  const child = spawn(options.node ?? process.execPath, [options.bin ?? BIN, ...args], {
    cwd: options.cwd,
    env: cleanEnv(options.home ?? options.cwd, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(options.input ?? '');
  return child;
}

/** Collects a spawned run's output and exit. */
export function finished(child: ChildProcess, timeoutMs = 60_000): Promise<CliRun> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}

/** Runs the command line to its end. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliRun> {
  return finished(spawnCli(args, options), options.timeoutMs);
}

/**
 * A temporary folder by its real path, removed by `cleanup`. macOS's temporary folder is below `/var`, a link to
 * `/private/var`, and Windows's is often named in 8.3 short form (`RUNNER~1`): the command line reports real
 * paths, which a test compares with this one.
 */
export async function tempDir(prefix = 'mission-e2e-'): Promise<string> {
  return realpathSync.native(await mkdtemp(join(tmpdir(), prefix)));
}

/** Removes a temporary folder. */
export async function cleanup(path: string | undefined): Promise<void> {
  if (path) await rm(path, { recursive: true, force: true });
}

/** A running reference server on its own temporary store. */
export interface TestServer extends ReferenceServer {
  /** Stops the server and removes its store (when the store was made here). */
  stop(): Promise<void>;
  /** The storage keys of the objects stored, sorted (the folder's files, or the bucket's objects). */
  objects(): Promise<string[]>;
  /** The bytes stored under `key`; undefined when none are. */
  readObject(key: string): Promise<Buffer | undefined>;
}

/**
 * True when the end-to-end tests run against the service on real backends (`MISSION_DATA_E2E_BACKENDS=1`, the
 * second pass of `.ci/run`): every server `startServer` starts then keeps its objects in a bucket of an
 * S3-compatible store and its index in PostgreSQL, both started for it (holding what its store folder held).
 */
export const ON_BACKENDS = process.env.MISSION_DATA_E2E_BACKENDS === '1';

/**
 * Whether the S3-compatible store of the backends (s3rver) can list a bucket past its first page of 1,000
 * objects: its continuation tokens are DES-encrypted, a cipher OpenSSL 3 offers only with its legacy provider
 * (`NODE_OPTIONS=--openssl-legacy-provider`, as `.ci/run` sets for the backends pass).
 */
export const BUCKET_LISTS_PAST_ONE_PAGE = (() => {
  try {
    createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
})();

/**
 * Every regular file below a store folder, as storage keys ('/' separators), leaving out dot-entries at any
 * level (the folder store's `.checksums`, `.incoming`, `.mission-data-secret`).
 */
async function storeKeys(storeDir: string): Promise<string[]> {
  const entries = await readdir(storeDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(storeDir, join(entry.parentPath, entry.name)).split(sep))
    .filter((parts) => !parts.some((part) => part.startsWith('.')))
    .map((parts) => parts.join('/'))
    .sort();
}

/** Puts every object of the store folder `storeDir` in the bucket below `prefix`, with its checksums as the service records them. */
async function seedBucket(client: S3Client, bucket: string, prefix: string, storeDir: string): Promise<void> {
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  const keys = await storeKeys(storeDir);
  for (let start = 0; start < keys.length; start += 8) {
    await Promise.all(
      keys.slice(start, start + 8).map(async (key) => {
        const body = await readFile(join(storeDir, ...key.split('/')));
        await client
          .send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: `${prefix}${key}`,
              Body: body,
              ContentType: 'application/octet-stream',
              Metadata: {
                md5: createHash('md5').update(body).digest('hex'),
                sha256: createHash('sha256').update(body).digest('hex'),
                crc32: String(crc32(body) >>> 0),
              },
            }),
          )
          .catch((error: unknown) => {
            throw new Error(`could not put ${key} in the bucket: ${String(error)}`, { cause: error });
          });
      }),
    );
  }
}

/**
 * Starts the reference server on a bucket and a database of their own (see `ON_BACKENDS`). With `storeDir`,
 * the objects of that store folder are put in the bucket first and indexed (`reindex`) before it is returned.
 */
async function startServerOnBackends(options: ServerOptions): Promise<TestServer> {
  const { startPostgres, startS3Store } = await import('./backends.js');
  const [s3, db] = await Promise.all([startS3Store(), startPostgres()]);
  const { GetObjectCommand, ListObjectsV2Command, NoSuchKey, S3Client } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  let server: ReferenceServer | undefined;
  try {
    await s3.createBucket('e2e');
    if (options.storeDir !== undefined && existsSync(options.storeDir))
      await seedBucket(client, 'e2e', 'archive/', options.storeDir);
    if (options.prepareBackends) {
      const { PutObjectCommand } = await import('@aws-sdk/client-s3');
      await options.prepareBackends({
        indexUrl: db.url,
        async putObject(key, body) {
          await client.send(new PutObjectCommand({ Bucket: 'e2e', Key: `archive/${key}`, Body: body }));
        },
      });
    }
    server = await startReferenceServer({
      store: 's3://e2e/archive',
      s3Endpoint: s3.endpoint,
      s3Credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      indexUrl: db.url,
      port: 0,
      wire: options.wire ?? 'envelope',
      dialect: options.dialect ?? 'both',
      apiKeys: options.apiKeys,
      log: options.log,
    });
    if (options.storeDir !== undefined) await server.reindex();
  } catch (error) {
    await server?.close();
    client.destroy();
    await Promise.all([s3.stop(), db.stop()]);
    throw error;
  }
  const started = server;
  return Object.assign(started, {
    async stop() {
      await started.close();
      client.destroy();
      await Promise.all([s3.stop(), db.stop()]);
    },
    async objects() {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket: 'e2e',
            Prefix: 'archive/',
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
        for (const entry of page.Contents ?? []) keys.push((entry.Key ?? '').slice('archive/'.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async readObject(key: string) {
      try {
        const got = await client.send(new GetObjectCommand({ Bucket: 'e2e', Key: `archive/${key}` }));
        return Buffer.from((await got.Body?.transformToByteArray()) ?? []);
      } catch (error) {
        if (error instanceof NoSuchKey) return undefined;
        throw error;
      }
    },
  });
}

/**
 * Starts the reference server on `storeDir` (default: a new temporary folder). On the backends (`ON_BACKENDS`)
 * it serves a bucket and PostgreSQL instead, holding the objects `storeDir` holds at start.
 */
/** What a test server is started with. */
export interface ServerOptions {
  wire?: WireMode;
  /** Which service the server plays (default `both`). */
  dialect?: Dialect;
  storeDir?: string;
  apiKeys?: string[];
  /** Receives one entry per request answered (method, path with the query of API routes, status). */
  log?: (entry: RequestLogEntry) => void;
  /**
   * On the backends only: runs once the bucket and the database exist and before the server starts (to lay
   * down an index of an older schema, say), with the database's URL and a way to put objects in the bucket.
   */
  prepareBackends?: (backends: {
    indexUrl: string;
    putObject(key: string, body: Buffer): Promise<void>;
  }) => Promise<void>;
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  if (ON_BACKENDS) return startServerOnBackends(options);
  const storeDir = options.storeDir ?? (await tempDir('mission-store-'));
  const server = await startReferenceServer({
    store: storeDir,
    port: 0,
    dialect: options.dialect ?? 'both',
    wire: options.wire ?? 'envelope',
    apiKeys: options.apiKeys,
    secret: 'e2e-test-secret-0123456789',
    log: options.log,
  });
  return Object.assign(server, {
    async stop() {
      await server.close();
      if (!options.storeDir) await cleanup(storeDir);
    },
    objects: () => listFiles(storeDir),
    async readObject(key: string) {
      const path = join(storeDir, ...key.split('/'));
      return existsSync(path) ? readFile(path) : undefined;
    },
  });
}

/** Writes `contents` at the storage path of `name` below `root` (a data root or a store folder). */
export async function putFile(
  root: string,
  name: string,
  contents: Buffer | string,
  mtime?: Date,
): Promise<string> {
  const path = join(root, ...parsePathOrName(name).path.split('/'));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, contents);
  if (mtime) await utimes(path, mtime, mtime);
  return path;
}

/**
 * Every file below `root`, as paths relative to it with '/' separators, sorted. State kept in dot-folders
 * (a data root's `.mission-data` record of verified downloads, a store's `.checksums`) is left out unless asked for.
 */
export async function listFiles(root: string, options: { state?: boolean } = {}): Promise<string[]> {
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .filter(
      (entry) =>
        options.state ||
        // The machine's host id, kept in the configuration folder once any run needs it, is state too.
        (entry.name !== 'host-id' &&
          !entry.parentPath
            .slice(root.length)
            .split(sep)
            .some((folder) => folder.startsWith('.'))),
    )
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(root.length + 1)
        .split('\\')
        .join('/'),
    )
    .sort();
}

/** Deterministic bytes of a given size, different per seed. */
export function bytesFor(seed: string, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  let state = 2166136261;
  for (const char of seed) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0;
  for (let index = 0; index < size; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    buffer[index] = state & 0xff;
  }
  return buffer;
}

/** A science file name of `instrument` for a day of January 2024 (1-31) or later days counted on. */
export function scienceName(instrument: string, day: number, level = 'l1a', version = 'v01-00'): string {
  const date = new Date(Date.UTC(2024, 0, day));
  const stamp = date.toISOString().slice(0, 10).replaceAll('-', '');
  return `imap_${instrument}_${level}_test_${stamp}_${stamp}_${version}.${level === 'l0' ? 'pkts' : 'cdf'}`;
}

/** Waits until `check` is true, polling every 20 ms, for at most `timeoutMs`. Returns whether it became true. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((done) => setTimeout(done, 20));
  }
  return false;
}

/** A `mission-data serve` process that printed its Listening line. */
export interface ServeProcess {
  child: ChildProcess;
  /** The address of its Listening line. */
  url: string;
  stdout(): string;
  stderr(): string;
  /** Its exit status, once it ends. */
  exit: Promise<number | null>;
}

/**
 * Spawns `node bin/mission-data.js serve ...args` and resolves once it printed its Listening line (on any host
 * with `anyHost`, else on 127.0.0.1); rejects with its stderr when it ends first.
 */
export function spawnServe(
  args: readonly string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    anyHost?: boolean;
    /** The bin to run; default the repository's `bin/mission-data.js`. */
    bin?: string;
    /** Told the process at once, so a test can kill it whether or not it ever listens. */
    onChild?: (child: ChildProcess) => void;
  },
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [options.bin ?? BIN, 'serve', ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  options.onChild?.(child);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  const listening = options.anyHost
    ? /^Listening on (https?:\/\/\S+)\n/
    : /^Listening on (https?:\/\/127\.0\.0\.1:\d+)\n/;
  return new Promise((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = listening.exec(stdout);
      if (match?.[1]) done({ child, url: match[1], stdout: () => stdout, stderr: () => stderr, exit });
    });
    void exit.then((code) => fail(new Error(`serve exited with ${code} before listening:\n${stderr}`)));
  });
}
