/** Benchmark case: latency of GET /query on a generated store of 100,000 files. */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { startReferenceServer } from '../dist/server/index.js';
import { formatBytes, markdownTable, percentile } from './lib/stats.js';
import { cachedStore } from './lib/store.js';

/** Files in the generated store. */
export const STORE_FILES = 100_000;

/** Representative queries, each with a bound on its requests (large answers get fewer). */
function queries(keys) {
  return [
    {
      label: 'one file (`file_path`)',
      search: `file_path=${keys[Math.min(12_345, keys.length - 1)]}`,
      requests: 300,
    },
    { label: 'instrument', search: 'instrument=mag', requests: 100 },
    {
      label: 'instrument + data_level + one month',
      search: 'instrument=mag&data_level=l1a&start_date=20240301&end_date=20240331',
      requests: 300,
    },
    { label: 'instrument + latest', search: 'instrument=mag&version=latest', requests: 100 },
    {
      label: 'descriptor + one week (no instrument)',
      search: 'descriptor=burst&start_date=20250101&end_date=20250107',
      requests: 200,
    },
    { label: 'latest over the whole table', search: 'version=latest', requests: 20 },
  ];
}

async function timeQuery(dispatcher, url, search, requests) {
  const samples = [];
  let results = 0;
  let bytes = 0;
  for (let i = 0; i < requests + 3; i += 1) {
    const started = performance.now();
    const response = await request(`${url}/query?${search}`, { dispatcher });
    const text = await response.body.text();
    const elapsed = performance.now() - started;
    if (response.statusCode !== 200)
      throw new Error(`/query?${search}: HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    // The first requests warm up the JIT and the connection.
    if (i >= 3) samples.push(elapsed);
    if (i === 0) {
      bytes = Buffer.byteLength(text);
      results = JSON.parse(text).body.length;
    }
  }
  return { samples, results, bytes };
}

/** Runs the case and returns its markdown section. */
export async function run({ quick = false, count = quick ? 2_000 : STORE_FILES } = {}) {
  const dispatcher = new Agent({ connections: 1 });
  let server;
  try {
    let started = performance.now();
    const { dir, keys, reused } = await cachedStore(count);
    const generateMs = performance.now() - started;
    started = performance.now();
    server = await startReferenceServer({ store: dir, port: 0 });
    const startMs = performance.now() - started;
    const rows = [];
    for (const query of queries(keys)) {
      const { samples, results, bytes } = await timeQuery(
        dispatcher,
        server.url,
        query.search,
        query.requests,
      );
      rows.push([
        query.label,
        `\`${query.search.length > 60 ? `${query.search.slice(0, 57)}...` : query.search}\``,
        String(results),
        formatBytes(bytes),
        String(samples.length),
        percentile(samples, 50).toFixed(2),
        percentile(samples, 95).toFixed(2),
      ]);
    }
    return [
      `### GET /query on a store of ${count.toLocaleString('en-US')} files`,
      '',
      `${reused ? `Store reused from ${dir}` : `Store generated in ${(generateMs / 1000).toFixed(1)} s at ${dir}`}; ` +
        `server started (index built from a scan) in ${(startMs / 1000).toFixed(2)} s.`,
      'Wire mode `envelope`; one keep-alive connection; times include reading the whole body.',
      '',
      markdownTable(['Query', 'Parameters', 'Results', 'Body', 'Requests', 'p50 (ms)', 'p95 (ms)'], rows),
    ].join('\n');
  } finally {
    await dispatcher.close();
    await server?.close();
  }
}
