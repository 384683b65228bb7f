/**
 * `/query` during an upload burst through two servers on one bucket (s3rver) and one database (PostgreSQL),
 * beside the same queries with no uploads: p50/p99/max of 8 query threads, half of whose queries select what is
 * being uploaded. The store's request log counts the CopyObject (checksums recorded at confirmation), GET and
 * HEAD requests per object: each object is confirmed once.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startBackends } from './backends.js';
import { execute, tool } from './lib/measure.js';
import { startListeningProcess } from './lib/server.js';
import { markdownTable, median, percentile } from './lib/stats.js';

const INSTRUMENTS = ['mag', 'swe', 'hit', 'codice', 'lo', 'hi-45', 'ultra-45', 'idex'];
const QUERY_THREADS = 8;

/**
 * The servers' requests to the store, counted per key from the store's request log: CopyObject (checksums
 * recorded), GET (bytes read back to check them) and HEAD. The upload processes' PUTs are in it too, uncounted.
 */
function countRequests(logPath) {
  const copies = new Map();
  const heads = new Map();
  const reads = new Map();
  /** How long the store took to answer each HEAD, in ms. */
  const headMs = [];
  const add = (counts, key) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    const [method, key, copy, , ms] = line.split(' ');
    if (!key) continue;
    if (method === 'PUT' && copy === 'copy') add(copies, key);
    if (method === 'HEAD') {
      add(heads, key);
      headMs.push(Number(ms));
    }
    if (method === 'GET' && key.split('/').length > 3) add(reads, key);
  }
  return { copies, heads, reads, headMs };
}

function name(instrument, day) {
  const date = new Date(Date.UTC(2024, 0, 1) + day * 86_400_000)
    .toISOString()
    .slice(0, 10)
    .replaceAll('-', '');
  return `imap_${instrument}_l1a_load_${date}_${date}_v01-00.cdf`;
}

function keyOf(file) {
  const [, instrument, level, , start] = file.split('_');
  return `imap/${instrument}/${level}/${start.slice(0, 4)}/${start.slice(4, 6)}/${file}`;
}

/** 8 threads of `/query` until `done()`: half select an instrument being uploaded, half one that is not. */
async function queryLoad(servers, done, selected) {
  const samples = [];
  /** The same samples by kind: queries that select an instrument being uploaded, and the others. */
  const selecting = [];
  const others = [];
  let failures = 0;
  await Promise.all(
    Array.from({ length: QUERY_THREADS }, async (_, thread) => {
      let at = 0;
      while (!done()) {
        const server = servers[(thread + at) % servers.length];
        const selects = (thread + at) % 2 === 0;
        const search = selects ? `instrument=${selected[at % selected.length]}` : 'instrument=glows';
        const started = performance.now();
        try {
          const answer = await fetch(`${server.url}/query?${search}`);
          await answer.arrayBuffer();
          if (answer.status >= 500) failures += 1;
        } catch {
          failures += 1;
        }
        const took = performance.now() - started;
        samples.push(took);
        (selects ? selecting : others).push(took);
        at += 1;
      }
    }),
  );
  return { samples, failures, selecting, others };
}

function latencyRow(label, { samples, failures }) {
  return [
    label,
    String(samples.length),
    `${median(samples).toFixed(1)} ms`,
    `${percentile(samples, 99).toFixed(1)} ms`,
    `${Math.max(...samples).toFixed(1)} ms`,
    String(failures),
  ];
}

/** Runs the case and returns its markdown section. */
export async function run({ quick = false } = {}) {
  const processes = quick ? 4 : 8;
  const perProcess = quick ? 15 : 50;
  const work = await mkdtemp(join(tmpdir(), 'mission-bench-load-'));
  const requestLog = join(work, 'store-requests.log');
  const backends = await startBackends({ MISSION_DATA_BACKENDS_REQUEST_LOG: requestLog });
  const env = {
    ...process.env,
    ...backends.env,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const servers = [];
  let stopped = false;
  try {
    for (let at = 0; at < 2; at += 1) {
      servers.push(
        await startListeningProcess(
          [
            new URL('../bin/mission-data.js', import.meta.url).pathname,
            'serve',
            '--store',
            's3://archive/load',
            '--port',
            '0',
            '--wire',
            'gateway',
            '--quiet',
          ],
          'serve --store s3://archive/load',
          env,
        ),
      );
    }
    const selected = INSTRUMENTS.slice(0, processes);
    // No uploads: the same queries for a fixed time.
    const idleUntil = performance.now() + (quick ? 2_000 : 10_000);
    const idle = await queryLoad(servers, () => performance.now() >= idleUntil, selected);
    // The burst: `processes` upload commands of `perProcess` small files, through the two servers in turn.
    const batches = selected.map((instrument, at) => {
      const root = join(work, `sent-${instrument}`);
      const files = Array.from({ length: perProcess }, (_, day) => name(instrument, day));
      for (const file of files) {
        const path = join(root, ...keyOf(file).split('/'));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, Buffer.alloc(4096 + day(file), at));
      }
      return { root, files, server: servers[at % 2] };
    });
    let uploading = true;
    const started = performance.now();
    const load = queryLoad(servers, () => !uploading, selected);
    await Promise.all(
      batches.map((batch) =>
        execute(
          tool(['upload', ...batch.files, '--url', batch.server.url, '--data-dir', batch.root], {
            env,
            peakRss: false,
          }),
        ),
      ),
    );
    const burstMs = performance.now() - started;
    uploading = false;
    const burst = await load;
    const total = processes * perProcess;
    // Every object confirmed (the last ones by the loop, after the burst) before CopyObject is counted.
    const confirmedBy = performance.now() + 30_000;
    let confirmed = 0;
    while (performance.now() < confirmedBy) {
      const counts = await Promise.all(
        selected.map(async (instrument) => {
          const answer = await fetch(`${servers[0].url}/query?instrument=${instrument}`);
          return (await answer.json()).length;
        }),
      );
      confirmed = counts.reduce((sum, count) => sum + count, 0);
      if (confirmed >= total) break;
      await new Promise((done) => setTimeout(done, 200));
    }
    await Promise.all(servers.splice(0).map((server) => server.close()));
    const operators = await operatorsOverhead(env, selected, quick);
    // The log is complete once the store has stopped.
    await backends.stop();
    stopped = true;
    const counts = countRequests(requestLog);
    const sum = (counts) => [...counts.values()].reduce((all, count) => all + count, 0);
    const most = (counts) => Math.max(0, ...counts.values());
    const latencies = markdownTable(
      ['case', 'queries', 'p50', 'p99', 'max', '5xx or failed'],
      [
        latencyRow('no uploads', idle),
        latencyRow(`during ${total} uploads (${processes} processes)`, burst),
        latencyRow('… of them, queries that select what is uploaded', {
          samples: burst.selecting,
          failures: 0,
        }),
        latencyRow('… of them, queries of other files', { samples: burst.others, failures: 0 }),
      ],
    );
    return [
      '### Two servers under an upload burst (s3rver + PostgreSQL)',
      '',
      `\`/query\` from ${QUERY_THREADS} threads to two \`serve\` processes on one bucket and one database; during the burst half the queries select an instrument being uploaded. Burst: ${total} files of about 4 KiB in ${(burstMs / 1000).toFixed(1)} s.`,
      '',
      latencies,
      '',
      `What metrics and JSON logs cost: \`/query\` with no uploads, the same ${QUERY_THREADS} threads, on two fresh servers per case, ${operators.rounds} round${operators.rounds === 1 ? '' : 's'} of ${operators.seconds} s a case taken in turn; with metrics, each server is scraped once a second as Prometheus would. Goal: p50 and p99 within 5 % of the first row.`,
      '',
      operators.table,
      '',
      `Confirmation: ${confirmed} of ${total} objects found by \`/query\`; the servers read ${sum(counts.reads)} of them back (at most ${most(counts.reads)} times each) and copied ${sum(counts.copies)} (at most ${most(counts.copies)} times each): an upload whose signed Content-MD5 the store checked is confirmed from its HEAD. They sent ${sum(counts.heads)} HEADs (${(sum(counts.heads) / total).toFixed(1)} an object), counted in the store's request log${counts.headMs.length > 0 ? `; the store took ${median(counts.headMs).toFixed(1)} ms to answer one at the median, ${percentile(counts.headMs, 99).toFixed(1)} ms at p99` : ''}.`,
      '',
    ].join('\n');
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    if (!stopped) await backends.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The cases of the operators' overhead: serve's options beyond `--store … --port 0 --wire gateway`. */
const OPERATOR_CASES = [
  ['no metrics, no request log', ['--no-metrics', '--quiet']],
  ['metrics (scraped every 1 s), no request log', ['--quiet']],
  ['metrics (scraped every 1 s) and JSON request logs', ['--log-format', 'json']],
];

/**
 * `/query` p50/p99 with and without metrics and JSON logs: each case on two new servers of the same bucket and
 * database, the cases taken in turn for a few rounds so drift of the machine falls on all of them alike.
 */
async function operatorsOverhead(env, selected, quick) {
  const rounds = quick ? 1 : 3;
  const seconds = quick ? 2 : 8;
  const results = OPERATOR_CASES.map(() => ({ samples: [], failures: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [at, [, options]] of OPERATOR_CASES.entries()) {
      const pair = [];
      try {
        for (let server = 0; server < 2; server += 1) {
          pair.push(
            await startListeningProcess(
              [
                new URL('../bin/mission-data.js', import.meta.url).pathname,
                'serve',
                '--store',
                's3://archive/load',
                '--port',
                '0',
                '--wire',
                'gateway',
                ...options,
              ],
              `serve ${options.join(' ')}`,
              env,
            ),
          );
        }
        const scraped = !options.includes('--no-metrics');
        const until = performance.now() + seconds * 1000;
        const done = () => performance.now() >= until;
        const scrapes = scraped
          ? Promise.all(
              pair.map(async (server) => {
                while (!done()) {
                  await (await fetch(`${server.url}/metrics`)).arrayBuffer();
                  await new Promise((wake) => setTimeout(wake, 1_000));
                }
              }),
            )
          : Promise.resolve();
        const measured = await queryLoad(pair, done, selected);
        await scrapes;
        results[at].samples.push(...measured.samples);
        results[at].failures += measured.failures;
      } finally {
        await Promise.all(pair.map((server) => server.close()));
      }
    }
  }
  const base = results[0];
  const rows = OPERATOR_CASES.map(([label], at) => {
    const row = latencyRow(label, results[at]);
    if (at === 0 || base.samples.length === 0) return [...row, '', ''];
    const change = (p) =>
      `${((percentile(results[at].samples, p) / percentile(base.samples, p) - 1) * 100).toFixed(1)} %`;
    return [...row, change(50), change(99)];
  });
  return {
    rounds,
    seconds,
    table: markdownTable(
      ['case', 'queries', 'p50', 'p99', 'max', '5xx or failed', 'p50 vs first', 'p99 vs first'],
      rows,
    ),
  };
}

function day(file) {
  return Number(file.split('_')[4].slice(6, 8));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(await run({ quick: process.argv.includes('--quick') }));
}
