/**
 * The server side of the scale benchmarks: the generated archive's records written straight into the PostgreSQL
 * index's schema (no store objects: `/query` reads the index alone), `mission-data serve` started on it, and
 * `/query` of one instrument over one day and one month timed from this process; then `mission-data query` of a
 * large answer, its output written to a file, for the client's memory.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Agent, request } from 'undici';
import { parsePath } from '../../dist/naming/names.js';
import { ROW_COLUMNS, ROW_TYPES, rowValues } from '../../dist/server/metadata/postgres-query.js';
import { migrate } from '../../dist/server/metadata/postgres-schema.js';
import { randomPassword, startPostgresCluster } from '../../scripts/postgres-cluster.js';
import { compareRuns, tool } from './measure.js';
import { DAY_MS, dateOf, daysOf, FILES_PER_DAY, FIRST_DAY, forEachKey } from './scale-data.js';
import { cpuMsOf, peakRssOf, resetPeakRss, startServe, treeCpuMs } from './scale-process.js';
import { percentile } from './stats.js';

/** Rows inserted per statement. */
const BATCH_ROWS = 10_000;
/** Requests before the timed ones, to warm the JIT, the connection and PostgreSQL's caches. */
const WARM_UP_REQUESTS = 5;

/** The object of the `index`th name of the archive: a size, an ingestion a day after its date, an MD5. */
function objectOf(key, day, index) {
  return {
    file: parsePath(key),
    size: 1024 + ((index * 7919) % (8 * 1024 * 1024)),
    mtimeMs: FIRST_DAY + (day + 1) * DAY_MS + (index % 3600) * 1000,
    md5: createHash('md5').update(key).digest(),
  };
}

/** Inserts the rows of one batch, one statement of an array per column (as the index itself inserts). */
function insertRows(pool, rows) {
  const columns = ROW_TYPES.map((_, column) => rows.map((row) => row[column]));
  const arrays = ROW_TYPES.map((type, column) => `$${column + 1}::${type}[]`).join(', ');
  return pool.query(
    `INSERT INTO files (state, ${ROW_COLUMNS}) SELECT 'stored', * FROM unnest(${arrays})`,
    columns,
  );
}

/**
 * Adds the records of names `from` to `to` of the archive, two statements at a time (one per core: PostgreSQL
 * spends the time), the next batch made while they run.
 */
async function loadRecords(pool, from, to) {
  const inserting = new Set();
  for (let at = from; at < to; at += BATCH_ROWS) {
    const rows = [];
    forEachKey(
      Math.min(at + BATCH_ROWS, to),
      (key, day) => rows.push(rowValues(objectOf(key, day, at + rows.length))),
      at,
    );
    if (inserting.size >= 2) await Promise.race(inserting);
    const insert = insertRows(pool, rows).finally(() => inserting.delete(insert));
    inserting.add(insert);
  }
  await Promise.all(inserting);
  await pool.query('VACUUM ANALYZE files');
}

/** The number of records in a `/query` answer (the envelope's `body`, or a bare array). */
function recordsIn(text) {
  const answer = JSON.parse(text);
  return (Array.isArray(answer) ? answer : answer.body).length;
}

/**
 * Times `requests` GETs of `/query?<search>` one after another on one keep-alive connection, each to the end of
 * its body, after a warm-up; with the server's and PostgreSQL's CPU over them and the server's peak memory.
 */
async function timeQuery(server, postgresPid, search, requests) {
  const dispatcher = new Agent({ connections: 1 });
  try {
    const samples = [];
    let results = 0;
    let cpu;
    let peakReset = false;
    for (let i = -WARM_UP_REQUESTS; i < requests; i += 1) {
      if (i === 0) {
        peakReset = resetPeakRss(server.pid);
        cpu = { server: cpuMsOf(server.pid), postgres: treeCpuMs(postgresPid), wall: performance.now() };
      }
      const started = performance.now();
      const response = await request(`${server.url}/query?${search}`, { dispatcher });
      const text = await response.body.text();
      if (response.statusCode !== 200)
        throw new Error(`/query?${search}: HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
      if (i >= 0) samples.push(performance.now() - started);
      else results = recordsIn(text);
    }
    return {
      results,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      wallMs: performance.now() - cpu.wall,
      serverCpuMs: cpuMsOf(server.pid) - cpu.server,
      postgresCpuMs: treeCpuMs(postgresPid) - cpu.postgres,
      serverPeakRss: peakRssOf(server.pid),
      peakReset,
    };
  } finally {
    await dispatcher.close();
  }
}

/** The last day of the month of `date` (`YYYYMMDD`). */
function monthEnd(date) {
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(4, 6));
  return `${date.slice(0, 6)}${new Date(Date.UTC(year, month, 0)).getUTCDate()}`;
}

/**
 * `mission-data query` of the first `answered` records (by start date: whole days, so a few more), the JSON
 * written to a file; median wall and CPU of `repetitions` runs, largest peak memory. The file is read back to
 * check the answer was whole.
 */
async function cliQuery(url, answered, largest, repetitions, work) {
  const days = daysOf(answered);
  const out = join(work, `query-${answered}.json`);
  const args = [
    'query',
    '--start-date',
    dateOf(0),
    '--end-date',
    dateOf(days - 1),
    '--output-format',
    'json',
  ];
  const expected = Math.min(days * FILES_PER_DAY, largest);
  const results = await compareRuns({
    repetitions,
    warmup: false,
    verify: () => {
      const found = JSON.parse(readFileSync(out, 'utf8')).length;
      if (found !== expected) throw new Error(`query wrote ${found} records to ${out}; expected ${expected}`);
    },
    runs: [
      {
        name: 'query',
        make: () => {
          const run = tool([...args, '--url', url]);
          // The shell sends stdout to the file, then becomes the tool (exec): what is measured is the tool alone.
          return { ...run, command: 'sh', args: ['-c', 'exec "$@" > "$0"', out, run.command, ...run.args] };
        },
      },
    ],
  });
  rmSync(out, { force: true });
  return { answered: expected, ...results.query };
}

/**
 * Runs the server-side cases at each of `sizes` (records, ascending: the index grows from one to the next) and
 * the end-to-end query at the largest; resolves with what each measured and the time the loads took.
 */
export async function indexCases({ sizes, requests, answered, repetitions }) {
  const database = await startPostgresCluster({
    user: 'mission',
    password: randomPassword(),
    database: 'mission',
  });
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // An idle client told the cluster stops must not end the benchmark.
  pool.on('error', () => undefined);
  const work = mkdtempSync(join(tmpdir(), 'mission-bench-scale-index-'));
  try {
    mkdirSync(join(work, 'store'));
    await migrate(pool);
    // The day in the middle of the smallest archive, and its month: held at every size.
    const day = dateOf(Math.floor(daysOf(sizes[0]) / 2));
    const searches = [
      `instrument=mag&start_date=${day}&end_date=${day}`,
      `instrument=mag&start_date=${day.slice(0, 6)}01&end_date=${monthEnd(day)}`,
    ];
    const bySize = [];
    const loadsMs = [];
    let cli = [];
    let loaded = 0;
    for (const size of sizes) {
      const started = performance.now();
      await loadRecords(pool, loaded, size);
      loadsMs.push(performance.now() - started);
      loaded = size;
      const server = await startServe(['--store', join(work, 'store'), '--index', database.url]);
      try {
        const measured = [];
        for (const search of searches)
          measured.push({ search, ...(await timeQuery(server, database.pid, search, requests)) });
        bySize.push(measured);
        if (size === sizes.at(-1)) {
          cli = [];
          for (const count of answered) cli.push(await cliQuery(server.url, count, size, repetitions, work));
        }
      } finally {
        await server.close();
      }
    }
    return { queries: searches.map((_, at) => bySize.map((measured) => measured[at])), cli, loadsMs };
  } finally {
    await pool.end();
    await database.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
