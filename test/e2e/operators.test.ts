/**
 * The service for the people who run it, from the built bin: `/metrics` that promtool accepts and a real
 * Prometheus scrapes from two servers, a request id from the client's error line to the server's JSON log line
 * and the error body, and a drain on SIGTERM of one of two servers (one bucket, one database) behind a proxy
 * that retries, during uploads and a storm of queries.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, startS3Store } from '../helpers/backends.js';
import {
  assertBuilt,
  bytesFor,
  cleanEnv,
  cleanup,
  putFile,
  runCli,
  type ServeProcess,
  scienceName,
  spawnCli,
  spawnServe,
  tempDir,
  waitFor,
} from '../helpers/e2e.js';
import { linuxOnly, unixOnly } from '../helpers/platform.js';
import { startRetryingProxy } from '../helpers/retrying-proxy.js';

const SIGNALS = unixOnly('SIGTERM');
// Debian's prometheus package: the CI installs it on Linux only.
const PROMETHEUS = linuxOnly('prometheus');

const children: ChildProcess[] = [];
let home: string;

beforeAll(async () => {
  assertBuilt();
  home = await tempDir('mission-operators-');
});
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  await cleanup(home);
});

/** Whether Debian's prometheus package is installed (`.ci/run` installs it; a plain `npm test` may not have it). */
const PROMETHEUS_INSTALLED = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v prometheus && command -v promtool'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
/** Outside CI the Prometheus cases skip, saying why, when the package is missing; under CI they fail instead. */
const WITHOUT_PROMETHEUS = !PROMETHEUS_INSTALLED && process.env.CI !== 'true';
if (WITHOUT_PROMETHEUS) {
  console.warn('Skipping the Prometheus cases: apt-get install -y prometheus (as .ci/run does) to run them.');
}

/** Which Debian tools the tests need, with what to do when one is missing. */
function requireTool(name: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`${name} is not installed: apt-get install -y prometheus (.ci/run does it)`);
  }
}

/** JSON objects of a server's stderr, one a line. */
function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

describe.skipIf(SIGNALS.missing)(SIGNALS.title('a folder server'), () => {
  function serve(args: string[]): Promise<ServeProcess> {
    return spawnServe(['--port', '0', '--store', join(home, 'store'), ...args], {
      cwd: home,
      env: cleanEnv(home),
      onChild: (child) => children.push(child),
    });
  }

  it.skipIf(WITHOUT_PROMETHEUS || PROMETHEUS.missing)(
    PROMETHEUS.title('/metrics passes promtool check metrics, with small label sets and no file path'),
    async () => {
      const promtool = requireTool('promtool');
      const served = await serve(['--demo', '--quiet']);
      for (const path of ['/query?instrument=mag', '/download/imap/mag/l1a/2025/01/none.cdf', '/health'])
        await (await fetch(`${served.url}${path}`)).arrayBuffer();
      const answer = await fetch(`${served.url}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await answer.text();
      const checked = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let said = '';
      checked.stdout.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      checked.stderr.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      checked.stdin.end(text);
      const code = await new Promise<number | null>((done) => checked.on('close', done));
      expect(said).toBe('');
      expect(code).toBe(0);
      expect(text).toMatch(
        /^mission_data_http_requests_total\{route="\/query",method="GET",status_class="2xx"\} 1$/m,
      );
      expect(text).toMatch(
        /^mission_data_http_requests_total\{route="\/download\/\{path\}",method="GET",status_class="4xx"\} 1$/m,
      );
      expect(text).toMatch(
        /^mission_data_backend_call_duration_seconds_count\{backend="index",operation="\w+"\} \d+$/m,
      );
      expect(text).toMatch(/^mission_data_backend_up\{backend="store"\} 1$/m);
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
      expect(text).not.toContain('none.cdf');
      served.child.kill('SIGTERM');
      expect(await served.exit).toBe(0);
    },
  );

  it('--metrics-port and --metrics-token keep /metrics off the API port, behind a token of its own', async () => {
    const metricsPort = await freePort();
    const served = await serve(['--metrics-port', String(metricsPort), '--log-format', 'json', '--quiet']);
    const token = 'scrape-token-0123';
    // The token from the environment, as an operator's unit file would give it.
    const other = await spawnServe(['--port', '0', '--store', join(home, 'store2'), '--quiet'], {
      cwd: home,
      env: cleanEnv(home, { MISSION_DATA_METRICS_TOKEN: token }),
      onChild: (child) => children.push(child),
    });
    expect((await fetch(`${served.url}/metrics`)).status).not.toBe(200);
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    expect((await fetch(metricsUrl)).status).toBe(200);
    const start = jsonLines(served.stderr()).find((line) => line.event === 'start');
    expect(start?.metrics).toBe(metricsUrl);
    expect((await fetch(`${other.url}/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${other.url}/metrics`, { headers: { Authorization: 'Bearer wrong-token-000' } })).status,
    ).toBe(401);
    const scraped = await fetch(`${other.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('mission_data_http_requests_total');
    for (const s of [served, other]) s.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(await other.exit).toBe(0);
  });

  it('a request id in the client error line, the JSON log line and the error body', async () => {
    const served = await serve(['--log-format', 'json']);
    const key = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250101_20250101_v01-00.cdf';
    const run = await runCli(
      ['download', key, '--url', served.url, '--data-dir', join(home, 'root'), '--debug'],
      {
        cwd: home,
      },
    );
    expect(run.code).not.toBe(0);
    // The line naming the failure, as the user sees it (a download's `failed <path>: …`).
    const errorLine = run.stderr.split('\n').find((line) => line.startsWith('failed '));
    const id = /request id ([0-9a-f]{16})\)$/.exec(errorLine ?? '')?.[1];
    expect(id, run.stderr).toBeDefined();
    expect(errorLine).toContain('404');
    // --debug names it on the request's own line too.
    expect(run.stderr).toMatch(
      new RegExp(`^debug: GET .*/download/.* -> 404 \\(\\d+ ms, request id ${id}\\)$`, 'm'),
    );
    expect(await waitFor(() => jsonLines(served.stderr()).some((line) => line.id === id))).toBe(true);
    const logged = jsonLines(served.stderr()).find((line) => line.id === id);
    expect(logged).toMatchObject({
      event: 'request',
      method: 'GET',
      route: '/download/{path}',
      status: 404,
      peer: '127.0.0.1',
    });
    // The body of the 404 answered (its envelope), as on every route.
    expect(logged?.bytes).toEqual(expect.any(Number));
    expect(logged?.bytes).toBeGreaterThan(0);
    expect(typeof logged?.time).toBe('string');
    expect(typeof logged?.durationMs).toBe('number');
    // A proxy's id is kept, answered in the header and the error body.
    const answer = await fetch(`${served.url}/download/${key}`, { headers: { 'X-Request-Id': 'lb-7f3a' } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-request-id')).toBe('lb-7f3a');
    expect(((await answer.json()) as { requestId?: string }).requestId).toBe('lb-7f3a');
    // A made-up id that is not one we can carry is replaced.
    const odd = await fetch(`${served.url}/query?instrument=mag`, { headers: { 'X-Request-Id': 'a b' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    const events = jsonLines(served.stderr()).map((line) => line.event);
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('stop');
  });
});

describe.skipIf(SIGNALS.missing)(SIGNALS.title('two servers on one bucket and one database'), () => {
  const BUCKET = 'operators';
  let s3: Awaited<ReturnType<typeof startS3Store>>;
  let db: Awaited<ReturnType<typeof startPostgres>>;
  let client: S3Client;

  beforeAll(async () => {
    [s3, db] = await Promise.all([startS3Store(), startPostgres()]);
    await s3.createBucket(BUCKET);
    client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), db?.stop()]);
  });

  function serve(
    prefix: string,
    args: string[] = [],
    env: Record<string, string> = {},
  ): Promise<ServeProcess> {
    return spawnServe(['--store', `s3://${BUCKET}/${prefix}`, '--port', '0', '--wire', 'gateway', ...args], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        MISSION_DATA_INDEX_URL: db.url,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      },
      onChild: (child) => children.push(child),
    });
  }

  it.skipIf(WITHOUT_PROMETHEUS || PROMETHEUS.missing)(
    PROMETHEUS.title(
      'a real Prometheus scrapes both: the request counter rises by the requests sent, pending uploads rise and fall to 0',
    ),
    async () => {
      const prometheus = requireTool('prometheus');
      const token = 'prometheus-scrape-token';
      const a = await serve('scraped', ['--quiet']);
      const metricsPort = await freePort();
      const b = await serve('scraped', ['--quiet', '--metrics-port', String(metricsPort)], {
        MISSION_DATA_METRICS_TOKEN: token,
      });
      const promPort = await freePort();
      const folder = join(home, 'prometheus');
      await mkdir(join(folder, 'data'), { recursive: true });
      await writeFile(join(folder, 'token'), token);
      await writeFile(
        join(folder, 'prometheus.yml'),
        [
          'global:',
          '  scrape_interval: 1s',
          '  scrape_timeout: 1s',
          'scrape_configs:',
          '  - job_name: mission-data',
          '    static_configs:',
          `      - targets: ['${new URL(a.url).host}']`,
          '        labels: {server: a}',
          '  - job_name: mission-data-b',
          '    authorization:',
          `      credentials_file: ${join(folder, 'token')}`,
          '    static_configs:',
          `      - targets: ['127.0.0.1:${metricsPort}']`,
          '        labels: {server: b}',
          '',
        ].join('\n'),
      );
      const prom = spawn(
        prometheus,
        [
          `--config.file=${join(folder, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(folder, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
          '--log.level=warn',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(prom);
      let promLog = '';
      prom.stderr?.on('data', (chunk: Buffer) => {
        promLog += chunk.toString();
      });
      const promExit = new Promise<number | null>((done) => prom.on('close', done));
      const api = `http://127.0.0.1:${promPort}/api/v1`;
      /** The instant vector of `expr`, by the `server` label. */
      const query = async (expr: string): Promise<Record<string, number>> => {
        const answer = await fetch(`${api}/query?query=${encodeURIComponent(expr)}`);
        const json = (await answer.json()) as {
          data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
        };
        const out: Record<string, number> = {};
        for (const { metric, value } of json.data.result) out[metric.server ?? ''] = Number(value[1]);
        return out;
      };
      const bothUp = async () => {
        try {
          const up = await query('up');
          return up.a === 1 && up.b === 1;
        } catch {
          return false;
        }
      };
      expect(await waitFor(bothUp, 30_000), promLog).toBe(true);

      const counted = 'sum by (server) (mission_data_http_requests_total{route="/query"})';
      const before = await query(counted);
      const sent = { a: 13, b: 17 };
      for (const [server, count] of Object.entries(sent)) {
        const url = server === 'a' ? a.url : b.url;
        for (let i = 0; i < count; i += 1) await (await fetch(`${url}/query?instrument=mag`)).arrayBuffer();
      }
      let after: Record<string, number> = {};
      const rose = async () => {
        after = await query(counted);
        return (after.a ?? 0) - (before.a ?? 0) === sent.a && (after.b ?? 0) - (before.b ?? 0) === sent.b;
      };
      expect(await waitFor(rose, 15_000), JSON.stringify({ before, after })).toBe(true);

      // Three names reserved through A: both servers see them pending (the index is shared), then the bytes
      // arrive, the confirmations settle them, and both say 0 again.
      const names = [1, 2, 3].map((day) => scienceName('hit', day));
      const urls: string[] = [];
      for (const name of names) {
        const answer = await fetch(`${a.url}/upload/${name}`);
        expect(answer.status).toBe(200);
        urls.push((await answer.json()) as string);
      }
      let pending: Record<string, number> = {};
      const pendingIs = (count: number) => async () => {
        pending = await query('mission_data_pending_uploads');
        return pending.a === count && pending.b === count;
      };
      expect(await waitFor(pendingIs(3), 15_000), JSON.stringify(pending)).toBe(true);
      for (const [at, url] of urls.entries()) {
        const put = await fetch(url, { method: 'PUT', body: bytesFor(`pending-${at}`, 1000) });
        expect(put.status).toBe(200);
      }
      expect(await waitFor(pendingIs(0), 20_000), JSON.stringify(pending)).toBe(true);
      const confirmed = await query('sum(mission_data_upload_confirmations_total{outcome="confirmed"})');
      expect(confirmed['']).toBe(3);

      prom.kill('SIGTERM');
      expect(await promExit).toBe(0);
      for (const s of [a, b]) s.child.kill('SIGTERM');
      expect([await a.exit, await b.exit]).toEqual([0, 0]);
    },
    90_000,
  );

  it('SIGTERM of one server during 8 uploads and a query storm: nothing lost, each upload stored once, exit 0 within the bound', async () => {
    const drainSeconds = 3;
    const args = ['--log-format', 'json', '--drain-timeout', String(drainSeconds)];
    const [a, b] = await Promise.all([serve('drained', args), serve('drained', args)]);
    const proxy = await startRetryingProxy([a.url, b.url]);
    const roots: string[] = [];
    const names: string[][] = [];
    for (let at = 0; at < 8; at += 1) {
      const root = join(home, `drain-${at}`);
      roots.push(root);
      names.push([]);
      for (let file = 0; file < 4; file += 1) {
        const name = scienceName('swapi', 1 + at * 4 + file);
        names[at]?.push(name);
        await putFile(root, name, bytesFor(`drain-${at}-${file}`, 150_000));
      }
    }
    let storming = true;
    const queries: number[] = [];
    const storm = Promise.all(
      [0, 1, 2, 3].map(async () => {
        for (let i = 0; storming && i < 10_000; i += 1) {
          // As the client does: a 502 or 503 (the machine saturated, a backend's breaker) is asked again.
          let status = 0;
          for (let attempt = 0; attempt < 5; attempt += 1) {
            const answer = await fetch(`${proxy.url}/query?instrument=swapi`);
            await answer.arrayBuffer();
            status = answer.status;
            if (status !== 502 && status !== 503) break;
            await new Promise((done) => setTimeout(done, 100 * 2 ** attempt));
          }
          queries.push(status);
        }
      }),
    );
    const uploads = roots.map((root, at) =>
      spawnCli(['upload', ...(names[at] as string[]), '--url', proxy.url, '--data-dir', root, '-c', '2'], {
        cwd: home,
      }),
    );
    for (const child of uploads) children.push(child);
    const exits = uploads.map(
      (child) =>
        new Promise<{ code: number | null; stderr: string }>((done) => {
          let stderr = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
          });
          child.on('close', (code) => done({ code, stderr }));
        }),
    );
    // Once A is answering some of them, it is told to stop.
    expect(await waitFor(() => proxy.attempts.filter((t) => t.backend === a.url).length >= 6, 20_000)).toBe(
      true,
    );
    const signalled = Date.now();
    a.child.kill('SIGTERM');
    const aExit = await a.exit;
    const tookMs = Date.now() - signalled;
    const results = await Promise.all(exits);
    storming = false;
    await storm;
    await proxy.close();

    expect(aExit).toBe(0);
    expect(tookMs).toBeLessThan(drainSeconds * 1000 + 2_000);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(queries.length).toBeGreaterThan(20);
    expect(queries.every((status) => status === 200)).toBe(true);
    expect(proxy.answered.filter((status) => status === 'error' || status >= 500)).toEqual([]);
    // A drained: it said so, answered new requests 503 or refused them once closed, and cut nothing.
    const aLog = jsonLines(a.stderr());
    expect(aLog.some((line) => line.event === 'draining')).toBe(true);
    expect(aLog.find((line) => line.event === 'stop')).toMatchObject({ cut: 0 });
    expect(
      aLog
        .filter(
          (line) => line.event === 'request' && (line.status as number) >= 500 && line.route !== '/health',
        )
        .every((line) => line.status === 503),
    ).toBe(true);
    // Every acknowledged upload is stored once: one object each in the bucket, one record each in the index.
    const expected = names.flat().sort();
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'drained/' }));
    const keys = (listed.Contents ?? []).map((entry) => (entry.Key ?? '').split('/').at(-1)).sort();
    expect(keys).toEqual(expected);
    const records = (await (await fetch(`${b.url}/query?instrument=swapi`)).json()) as {
      file_path: string;
    }[];
    expect(records.map((record) => record.file_path.split('/').at(-1)).sort()).toEqual(expected);
    b.child.kill('SIGTERM');
    expect(await b.exit).toBe(0);
  }, 120_000);
});
