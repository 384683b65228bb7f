/**
 * Benchmark cases of the service on real backends, each beside the embedded default: a filtered `query` over
 * 1,000,000 records in PostgreSQL and in memory (the index's own call, in-process), and one 1 GiB `upload` and
 * `download` through `serve --store s3://…` (s3rver, a process of its own) and `serve --store <folder>`.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parsePath } from '../dist/naming/names.js';
import { MemoryIndex } from '../dist/server/metadata/memory-index.js';
import { PostgresIndex } from '../dist/server/metadata/postgres-index.js';
import { checkFiles, writeLargeFile } from './lib/files.js';
import { command, compareRuns, execute, tool, toolAgainstReference } from './lib/measure.js';
import { startListeningProcess } from './lib/server.js';
import {
  cpuGoal,
  cpuSeconds,
  formatBytes,
  markdownTable,
  median,
  percentile,
  seconds,
  wallGoal,
} from './lib/stats.js';
import { storeKeys } from './lib/store.js';

const MIB = 1024 * 1024;
const FILTER = {
  table: 'science',
  instrument: 'mag',
  data_level: 'l1a',
  start_date: '20240301',
  end_date: '20240331',
};
const FILTER_TEXT = 'instrument=mag&data_level=l1a&start_date=20240301&end_date=20240331';

/**
 * Starts `npm run backends` on free ports (with `extraEnv`, such as its request log); resolves with the environment
 * it printed and a stop.
 */
export function startBackends(extraEnv = {}) {
  // Below Linux's range of ports for outgoing connections (32768–60999), which may hold any port of it.
  const port = () => String(12_000 + Math.floor(Math.random() * 20_000));
  // As `npm run backends` does: s3rver lists past 1,000 objects only with OpenSSL's legacy provider.
  const script = new URL('../scripts/backends.js', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', script], {
    env: { ...process.env, ...extraEnv, S3_PORT: port(), PG_PORT: port() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (!out.includes('mission-data serve')) return;
      const env = Object.fromEntries([...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
      const stop = () =>
        new Promise((done) => {
          child.once('exit', done);
          child.kill('SIGTERM');
        });
      resolve({ env, stop });
    });
    child.once('exit', (code) => reject(new Error(`backends exited with ${code}`)));
  });
}

async function timeQueries(index, requests) {
  const samples = [];
  let results = 0;
  for (let i = 0; i < requests + 3; i += 1) {
    const started = performance.now();
    const chunks = await index.queryChunks(FILTER);
    const elapsed = performance.now() - started;
    if (i >= 3) samples.push(elapsed);
    else results = JSON.parse(Buffer.concat(chunks).toString('utf8')).length;
  }
  return { samples, results };
}

async function queryRows(env, count, requests) {
  const keys = storeKeys(count);
  const objects = keys.map((key, at) => ({
    file: parsePath(key),
    size: 1000,
    mtimeMs: Date.UTC(2025, 0, 1) + at * 1000,
  }));
  let started = performance.now();
  const memory = new MemoryIndex(objects);
  const memoryLoad = performance.now() - started;
  const postgres = await PostgresIndex.open(env.MISSION_DATA_INDEX_URL);
  started = performance.now();
  await postgres.rebuild(objects);
  await postgres.pool.query('ANALYZE files');
  const postgresLoad = performance.now() - started;
  const rows = [];
  for (const [label, index, load] of [
    ['in memory (embedded default)', memory, memoryLoad],
    ['PostgreSQL', postgres, postgresLoad],
  ]) {
    const { samples, results } = await timeQueries(index, requests);
    rows.push([
      label,
      String(count),
      seconds(load),
      String(results),
      String(samples.length),
      `${median(samples).toFixed(2)} ms`,
      `${percentile(samples, 99).toFixed(2)} ms`,
    ]);
  }
  await postgres.close();
  return markdownTable(['index', 'records', 'load (s)', 'results', 'requests', 'median', 'p99'], rows);
}

/**
 * The download of an object the store states only an ETag for (s3rver, as real S3 for an object stored without a
 * checksum), verified by that MD5: `mission-data download` against `curl -L -o FILE` then `openssl md5 -binary
 * FILE`, the script that gives the same guarantee, timed together; interleaved runs, wall and CPU.
 */
async function md5OnlyDownload(server, key, size, env, work, repetitions) {
  const out = join(work, 'md5-out');
  // The store's download URLs sign only the host: curl follows them as any client does.
  const script = 'curl -sS -f -L --create-dirs -o "$1" "$2" && exec openssl md5 -binary "$1"';
  const results = await compareRuns({
    repetitions,
    prepare: () => rmSync(out, { recursive: true, force: true }),
    verify: (which) => checkFiles(which, out, { count: 1, size }),
    runs: [
      { name: 'tool', make: () => tool(['download', key, '--url', server.url, '--data-dir', out], { env }) },
      {
        name: 'reference',
        make: () =>
          command(
            'curl + openssl md5',
            'sh',
            ['-c', script, 'sh', join(out, 'file'), `${server.url}/download/${key}`],
            {
              env,
            },
          ),
      },
    ],
  });
  rmSync(out, { recursive: true, force: true });
  return { ...toolAgainstReference(results), size, repetitions };
}

async function transferRows(env, size, repetitions) {
  let md5Only;
  const work = await mkdtemp(join(tmpdir(), 'mission-bench-backends-'));
  const name = 'imap_mag_l1a_bench_20250101_20250101_v01-00.cdf';
  const key = `imap/mag/l1a/2025/01/${name}`;
  const rows = [];
  try {
    writeLargeFile(join(work, 'sent', ...key.split('/')), size);
    const backendEnv = { ...process.env, ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    const { MISSION_DATA_INDEX_URL: _, ...defaultEnv } = backendEnv;
    for (const [label, store, serveEnv] of [
      ['folder + memory (embedded default)', join(work, 'store'), defaultEnv],
      ['S3-compatible (s3rver) + PostgreSQL', 's3://archive/bench', backendEnv],
    ]) {
      const server = await startListeningProcess(
        [
          new URL('../bin/mission-data.js', import.meta.url).pathname,
          'serve',
          '--store',
          store,
          '--port',
          '0',
          '--quiet',
        ],
        `serve --store ${store}`,
        serveEnv,
      );
      try {
        const upload = await execute(
          tool(['upload', name, '--url', server.url, '--data-dir', join(work, 'sent')], { env: serveEnv }),
        );
        const received = join(work, `received-${rows.length}`);
        const download = await execute(
          tool(['download', key, '--url', server.url, '--data-dir', received], { env: serveEnv }),
        );
        rmSync(received, { recursive: true, force: true });
        rows.push([label, formatBytes(size), seconds(upload.ms), seconds(download.ms)]);
        if (store.startsWith('s3://'))
          md5Only = await md5OnlyDownload(server, key, size, serveEnv, work, repetitions);
      } finally {
        await server.close();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { table: markdownTable(['store', 'file', 'upload (s)', 'download (s)'], rows), md5Only };
}

/** Runs the cases and returns their markdown section. */
export async function run({ quick = false, quiet = false } = {}) {
  const backends = await startBackends();
  try {
    const count = quick ? 20_000 : 1_000_000;
    const query = await queryRows(backends.env, count, quick ? 20 : 200);
    const { table: transfer, md5Only } = await transferRows(
      backends.env,
      quick ? 64 * MIB : 1024 * MIB,
      quick ? 2 : 5,
    );
    const label = `Backends: download of one file of ${formatBytes(md5Only.size)} verified by MD5 alone (s3rver's ETag)`;
    const goals = [
      cpuGoal(`${label}: CPU against curl + openssl md5`, md5Only.toolCpuMs, md5Only.referenceCpuMs, 1.1),
      wallGoal(`${label}: speed against curl + openssl md5`, md5Only.referenceMs / md5Only.toolMs, 1, quiet),
    ];
    const markdown = [
      '### Backends: PostgreSQL index and S3-compatible store beside the embedded default',
      '',
      `Filtered query \`${FILTER_TEXT}\` over ${count.toLocaleString('en')} records (\`MetadataIndex.queryChunks\`, in-process; load = building the index):`,
      '',
      query,
      '',
      'One file through `mission-data upload` and `download` (wall time of each command, spawn to exit; on S3 the upload ends with the PUT, and the server confirms the object after):',
      '',
      transfer,
      '',
      `MD5 alone: the object on s3rver (which states only its ETag, the MD5 of an object stored without a ` +
        `checksum, as real S3 does) fetched by \`mission-data download\`, verified by that MD5, against \`curl -L ` +
        `-o FILE\` then \`openssl md5 -binary FILE\` timed together; median of ${md5Only.repetitions} interleaved ` +
        'runs of each after a warm-up run.',
      '',
      markdownTable(
        [
          'case',
          'mission-data',
          'curl + openssl md5',
          'speed ratio',
          'CPU: mission-data',
          'CPU: reference',
          'CPU ratio',
        ],
        [
          [
            `one file of ${formatBytes(md5Only.size)}`,
            `${seconds(md5Only.toolMs)} s`,
            `${seconds(md5Only.referenceMs)} s`,
            (md5Only.referenceMs / md5Only.toolMs).toFixed(2),
            cpuSeconds(md5Only.toolRuns),
            cpuSeconds(md5Only.referenceRuns),
            (md5Only.toolCpuMs / md5Only.referenceCpuMs).toFixed(2),
          ],
        ],
      ),
      '',
    ].join('\n');
    return { markdown, goals, peaks: [{ label, bytes: md5Only.peakRss }] };
  } finally {
    await backends.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write((await run({ quick: process.argv.includes('--quick') })).markdown);
}
