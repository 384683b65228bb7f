/**
 * Two `serve` processes on one bucket (s3rver) and one database (PostgreSQL) under an upload burst: queries are
 * answered at once and never miss an acknowledged upload (read-after-upload across servers), one winner per
 * name, no 5xx; and a server killed between a reservation and its answer leaves an honest 409 that a re-run of
 * the same bytes gets past. It starts its own backends, so the backends pass of the suite does not run it again.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3Store } from '../helpers/backends.js';
import {
  assertBuilt,
  bytesFor,
  cleanup,
  finished,
  ON_BACKENDS,
  putFile,
  runCli,
  type ServeProcess,
  scienceName,
  spawnCli,
  spawnServe,
  tempDir,
} from '../helpers/e2e.js';

const BUCKET = 'load';
let s3: Awaited<ReturnType<typeof startS3Store>>;
let db: Awaited<ReturnType<typeof startPostgres>>;
let home: string;
const children: ChildProcess[] = [];

function serve(): Promise<ServeProcess> {
  return spawnServe(['--store', `s3://${BUCKET}/data`, '--port', '0', '--wire', 'gateway', '--quiet'], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      MISSION_DATA_INDEX_URL: db.url,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    onChild: (child) => children.push(child),
  });
}

async function stop(served: ServeProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  // Any system: no test reads how it ended; Windows ends it at once on any signal, which stops it too.
  served.child.kill(signal);
  await served.exit;
}

async function queryPaths(url: string, search: string): Promise<string[]> {
  const answer = await fetch(`${url}/query?${search}`);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { file_path: string }[]).map((record) => record.file_path);
}

beforeAll(async () => {
  if (ON_BACKENDS) return;
  assertBuilt();
  [s3, db] = await Promise.all([startS3Store(), startPostgres()]);
  await s3.createBucket(BUCKET);
  home = await tempDir('mission-load-');
}, 60_000);

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await Promise.all([s3?.stop(), db?.stop()]);
  await cleanup(home);
});

const INSTRUMENTS = ['mag', 'swe', 'hit', 'codice'];

describe.skipIf(ON_BACKENDS)('two servers under an upload burst', () => {
  it('acknowledged uploads are found at once on the other server, once each; one winner per name; no 5xx', async () => {
    const started = Date.now();
    const servers = await Promise.all([serve(), serve()]);
    const [a, b] = servers as [ServeProcess, ServeProcess];
    // 4 upload processes of 10 files each, through A and B in turn.
    const batches = INSTRUMENTS.map((instrument, at) => ({
      instrument,
      through: servers[at % 2] as ServeProcess,
      other: servers[(at + 1) % 2] as ServeProcess,
      root: join(home, `burst-${instrument}`),
      names: Array.from({ length: 10 }, (_, day) => scienceName(instrument, day + 1)),
    }));
    for (const batch of batches) {
      for (const name of batch.names)
        await putFile(batch.root, name, bytesFor(`${name}`, 2_000 + name.length));
    }
    // Two uploads of one name with other bytes, through A and B at once.
    const raced = scienceName('idex', 1);
    const raceRoots = [join(home, 'race-1'), join(home, 'race-2')];
    await putFile(raceRoots[0] as string, raced, bytesFor('race-1', 5_000));
    await putFile(raceRoots[1] as string, raced, bytesFor('race-2', 5_000));

    let querying = true;
    const statuses: number[] = [];
    const latencies: number[] = [];
    const queries = Array.from({ length: 4 }, async (_, worker) => {
      let at = 0;
      while (querying) {
        const server = servers[(worker + at) % 2] as ServeProcess;
        const search = at % 2 === 0 ? `instrument=${INSTRUMENTS[at % 4]}` : 'instrument=glows';
        const begun = Date.now();
        try {
          const answer = await fetch(`${server.url}/query?${search}`);
          await answer.arrayBuffer();
          statuses.push(answer.status);
        } catch {
          statuses.push(0);
        }
        latencies.push(Date.now() - begun);
        at += 1;
      }
    });

    const uploads = batches.map(async (batch) => {
      const run = await finished(
        spawnCli(['upload', ...batch.names, '--url', batch.through.url, '--data-dir', batch.root], {
          cwd: home,
        }),
      );
      expect(run.code, run.stderr).toBe(0);
      // Read-after-upload: the next query on the other server finds every file this process uploaded.
      const found = await queryPaths(batch.other.url, `instrument=${batch.instrument}`);
      expect(found.map((path) => path.split('/').pop()).sort()).toEqual([...batch.names].sort());
    });
    const races = [a, b].map((server, at) =>
      runCli(['upload', raced, '--url', server.url, '--data-dir', raceRoots[at] as string], { cwd: home }),
    );
    let raceRuns: Awaited<ReturnType<typeof runCli>>[];
    try {
      await Promise.all(uploads);
      raceRuns = await Promise.all(races);
    } finally {
      querying = false;
      await Promise.all(queries);
    }

    expect(raceRuns.map((run) => run.code).sort()).toEqual([0, 1]);
    expect(raceRuns.find((run) => run.code === 1)?.stderr).toMatch(/409/);
    expect(statuses.filter((status) => status >= 500 || status === 0)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(0);
    for (const server of servers) {
      for (const batch of batches) {
        const paths = await queryPaths(server.url, `instrument=${batch.instrument}`);
        expect(new Set(paths).size).toBe(paths.length);
        expect(paths).toHaveLength(10);
      }
      expect(await queryPaths(server.url, 'instrument=idex')).toHaveLength(1);
    }
    // Nothing of the burst was confirmed with an error in either server's log.
    for (const server of servers) expect(server.stderr()).not.toMatch(/Error while/);
    await Promise.all(servers.map((server) => stop(server)));
    latencies.sort((x, y) => x - y);
    expect(latencies[Math.floor(latencies.length * 0.99)] ?? 0).toBeLessThan(2_500);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);
});

/**
 * A proxy in front of `target` that passes every request on, except that the answer to an `/upload` is never
 * delivered: the target is killed (SIGKILL) once it has answered, after it reserved the name.
 */
async function killingProxy(target: ServeProcess): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const forward = request(
      `${target.url}${req.url}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        if (req.url?.includes('/upload/')) {
          target.child.kill('SIGKILL');
          res.destroy();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe.skipIf(ON_BACKENDS)('a server killed between a reservation and its answer', () => {
  it('leaves a 409 that says the name is reserved, not stored; the same bytes run again succeed', async () => {
    const a = await serve();
    const b = await serve();
    const proxy = await killingProxy(a);
    const name = scienceName('lo', 7);
    const root = join(home, 'crash');
    const bytes = bytesFor('crash', 4_000);
    await putFile(root, name, bytes);
    try {
      const lost = await runCli(['upload', name, '--url', proxy.url, '--data-dir', root, '--retries', '0'], {
        cwd: home,
      });
      expect(lost.code).not.toBe(0);
      // Its exit is awaited first: the signal that ended it is known only once it has ended.
      await a.exit;
      expect(a.child.signalCode).toBe('SIGKILL');
    } finally {
      await proxy.close();
    }
    // Another file under the name: the name is taken, and the answer says by what.
    const answer = await fetch(`${b.url}/upload/${name}`);
    expect(answer.status).toBe(409);
    const body = await answer.text();
    expect(body).toMatch(/is reserved: an upload of this name started at \S+ and is not stored yet/);
    expect(body).not.toMatch(/already exists/);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = join(home, 'crash-other');
    await putFile(other, name, bytesFor('other bytes', 4_000));
    const refused = await runCli(['upload', name, '--url', b.url, '--data-dir', other], { cwd: home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not stored/);
    expect(refused.stderr).toMatch(/Try again after \d{4}-\d\d-\d\dT/);
    expect(refused.stderr).not.toMatch(/next version|could not be compared/);
    // The same bytes: the upload is taken back and stored.
    const again = await runCli(['upload', name, '--url', b.url, '--data-dir', root], { cwd: home });
    expect(again.code, again.stderr).toBe(0);
    expect(await queryPaths(b.url, 'instrument=lo')).toEqual([expect.stringContaining(name)]);
    await stop(b);
  }, 60_000);
});
