/**
 * Several `serve` processes, one service: two servers on one bucket (s3rver, SigV4 checked) and one database
 * (embedded PostgreSQL), driven by the built command line as users run it.
 */

import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseName } from '../../src/naming/names.js';
import { startPostgres, startS3Store } from '../helpers/backends.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  putFile,
  runCli,
  type ServeProcess,
  scienceName,
  spawnServe,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';

type Served = ServeProcess;

const BUCKET = 'archive';
let s3: Awaited<ReturnType<typeof startS3Store>>;
let db: Awaited<ReturnType<typeof startPostgres>>;
let client: S3Client;
let home: string;
const children: ChildProcess[] = [];

function serveEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    MISSION_DATA_INDEX_URL: db.url,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/** Spawns `serve` on the bucket and database; resolves once it printed its Listening line. */
function serve(args: string[] = []): Promise<Served> {
  return spawnServe(['--store', `s3://${BUCKET}/data`, '--port', '0', '--wire', 'gateway', ...args], {
    cwd: home,
    env: serveEnv(),
    onChild: (child) => children.push(child),
  });
}

async function stop(served: Served, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  // Any system: no test reads how it ended; Windows ends it at once on any signal, which stops it too.
  served.child.kill(signal);
  await served.exit;
}

async function bucketKeys(): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((entry) => entry.Key ?? '').sort();
}

async function queryPaths(url: string, search: string): Promise<string[]> {
  const answer = await fetch(`${url}/query?${search}`);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { file_path: string }[]).map((record) => record.file_path);
}

beforeAll(async () => {
  assertBuilt();
  [s3, db] = await Promise.all([startS3Store(), startPostgres()]);
  await s3.createBucket(BUCKET);
  client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  home = await tempDir('mission-service-');
}, 60_000);

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  client?.destroy();
  await Promise.all([s3?.stop(), db?.stop()]);
  await cleanup(home);
});

describe('two serve processes on one bucket and one database', () => {
  it('upload through A; query and download through B: same bytes, the URL on the store', async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    const name = scienceName('mag', 1);
    const bytes = bytesFor('through-a', 300_000);
    const sent = join(home, 'sent-1');
    await putFile(sent, name, bytes);
    const upload = await runCli(['upload', name, '--url', a.url, '--data-dir', sent], { cwd: home });
    expect(upload.code, upload.stderr).toBe(0);
    const [key] = await queryPaths(b.url, 'instrument=mag');
    expect(key).toMatch(new RegExp(`/${name}$`));
    expect(await bucketKeys()).toEqual([`data/${key}`]);

    const redirect = await fetch(`${b.url}/download/${key}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.get('location') ?? '').host).toBe(new URL(s3.endpoint).host);

    const received = join(home, 'received-1');
    const download = await runCli(['download', key as string, '--url', b.url, '--data-dir', received], {
      cwd: home,
    });
    expect(download.code, download.stderr).toBe(0);
    expect(await readFile(join(received, ...(key as string).split('/')))).toEqual(bytes);
    // Sent with its Content-MD5, checked by the store itself: confirmed from its HEAD, its ETag that MD5, and
    // neither read back nor copied by the server.
    const head = await client.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `data/${key}`, Range: 'bytes=0-0' }),
    );
    expect(head.ETag).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);
    expect(head.Metadata?.sha256).toBeUndefined();
    expect((await fetch(`${a.url}/health`)).status).toBe(200);
    await Promise.all([stop(a), stop(b)]);
  });

  it('concurrent uploads of one new name through A and B: exactly one stored, the other refused', async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    const name = scienceName('swe', 2);
    const roots = [join(home, 'race-a'), join(home, 'race-b')];
    await putFile(roots[0] as string, name, bytesFor('race-a', 200_000));
    await putFile(roots[1] as string, name, bytesFor('race-b', 200_000));
    const runs = await Promise.all(
      [a, b].map((server, at) =>
        runCli(['upload', name, '--url', server.url, '--data-dir', roots[at] as string], { cwd: home }),
      ),
    );
    expect(runs.map((run) => run.code).sort()).toEqual([0, 1]);
    const loser = runs.find((run) => run.code === 1);
    expect(loser?.stderr).toMatch(/409|already/);
    const keys = await queryPaths(a.url, 'instrument=swe');
    expect(keys).toHaveLength(1);
    expect((await bucketKeys()).filter((key) => key.includes('_swe_'))).toEqual([`data/${keys[0]}`]);
    const winner = runs.findIndex((run) => run.code === 0);
    const stored = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `data/${keys[0]}` }));
    expect(
      Buffer.from(await (stored.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array()))),
    ).toEqual(bytesFor(winner === 0 ? 'race-a' : 'race-b', 200_000));
    await Promise.all([stop(a), stop(b)]);
  });

  it('SIGKILL of A and a restart lose nothing and show nothing half done', async () => {
    const a = await serve();
    const b = await serve();
    const stored = scienceName('hit', 3);
    const root = join(home, 'kill');
    await putFile(root, stored, bytesFor('kill', 1000));
    expect((await runCli(['upload', stored, '--url', a.url, '--data-dir', root], { cwd: home })).code).toBe(
      0,
    );
    // An upload URL handed out by A; its bytes arrive after A is killed.
    const late = scienceName('hit', 4);
    const lateUrl = (await (await fetch(`${a.url}/upload/${late}`)).json()) as string;
    // A name reserved by A whose bytes never come.
    const never = scienceName('hit', 5);
    expect((await fetch(`${a.url}/upload/${never}`)).status).toBe(200);
    await stop(a, 'SIGKILL');
    expect((await fetch(lateUrl, { method: 'PUT', body: bytesFor('late', 500) })).status).toBe(200);

    const again = await serve();
    const paths = await queryPaths(again.url, 'instrument=hit');
    expect(paths.map((path) => path.split('/').pop())).toEqual([stored, late]);
    expect(await queryPaths(b.url, 'instrument=hit')).toEqual(paths);
    // The reserved name stays refused to others until its URL's life is over.
    expect((await fetch(`${b.url}/upload/${never}`)).status).toBe(409);
    expect(await waitFor(async () => (await bucketKeys()).length >= 3, 5_000)).toBe(true);
    await Promise.all([stop(again), stop(b)]);
  });
});

describe("serve on S3 as the README's example runs it", () => {
  it('keeps keys at the layout the client and --reindex use, says what it runs on, and prints no SDK warning', async () => {
    const readme = await readFile(join(import.meta.dirname, '../../README.md'), 'utf8');
    const store = /mission-data serve --store (s3:\/\/\S+)/.exec(readme)?.[1] as string;
    const bucket = new URL(store).host;
    await s3.createBucket(bucket);
    // Another tool put an object where the client's layout puts it.
    const placed = scienceName('idex', 21);
    const placedKey = parseName(placed).path;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: placedKey, Body: 'placed' }));
    // The setting the test runner gives every process is left out: serve itself keeps the SDK quiet.
    const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _, ...env } = serveEnv();
    const served = await spawnServe(['--store', store, '--port', '0', '--wire', 'gateway', '--reindex'], {
      cwd: home,
      env,
      onChild: (child) => children.push(child),
    });
    expect(await waitFor(() => served.stderr().includes('Reindexed:'), 10_000)).toBe(true);
    expect(served.stderr()).toContain(`Store: ${store} (`);
    expect(served.stderr()).toMatch(/^Index: postgres:\/\/test:\*\*\*@127\.0\.0\.1:\d+\/test$/m);
    expect(served.stderr()).not.toMatch(/NodeVersionSupportWarning|AWS SDK|unreadable/);
    expect(await queryPaths(served.url, 'instrument=idex')).toEqual([placedKey]);

    const name = scienceName('idex', 22);
    const sent = join(home, 'readme-s3');
    await putFile(sent, name, bytesFor('readme', 1000));
    const upload = await runCli(['upload', name, '--url', served.url, '--data-dir', sent], { cwd: home });
    expect(upload.code, upload.stderr).toBe(0);
    const paths = await queryPaths(served.url, 'instrument=idex');
    expect(paths).toEqual([placedKey, parseName(name).path]);
    expect(paths[1]).toMatch(/^imap\/idex\/l1a\/2024\/01\//);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect((listed.Contents ?? []).map((entry) => entry.Key).sort()).toEqual(paths);
    await stop(served);
    expect(served.stderr()).not.toMatch(/Warning/);
  });
});

describe('serve on a store or database that does not answer', () => {
  it.each([
    [
      ['--store', 's3://no-such-bucket'],
      {},
      /^Error: The store s3:\/\/no-such-bucket \(endpoint .*\) has no bucket no-such-bucket\.$/m,
    ],
    [
      [],
      { AWS_SECRET_ACCESS_KEY: 'wrong-secret' },
      /^Error: The store s3:\/\/archive\/data .* refused the credentials/m,
    ],
    [
      [],
      { MISSION_DATA_INDEX_URL: 'postgres://u:hidden-pw@127.0.0.1:1/x' },
      /^Error: Cannot reach the index database postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/x/m,
    ],
  ])('%j %j: one line naming what to check, exit 1, no stack', async (args, env, line) => {
    const run = await runCli(['serve', '--store', `s3://${BUCKET}/data`, '--port', '0', ...args], {
      cwd: home,
      env: { ...serveEnv(), ...env },
      timeoutMs: 30_000,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(line);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stderr).not.toContain('hidden-pw');
    expect(run.stderr).not.toContain(s3.secretAccessKey);
  });
});
