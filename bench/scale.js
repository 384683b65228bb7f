/**
 * Benchmark cases of scale: what the index and the data root cost as the archive grows, each case at two sizes
 * with the growth between them. The index (server side): `/query` of one instrument over one day and one month
 * over 100,000 and 1,000,000 records in PostgreSQL, and `mission-data query` answering 10,000 and 100,000
 * records. The data root (client side): `status`, `sync` with nothing new, `coverage`, `verify` and `download`
 * of files all held, over 10,000 and 100,000 held files, all of them and a tenth; and the verified record's size
 * after 1 and 10 `verify` passes. Generated data; generation is timed apart and not counted.
 *
 * At full size it takes about 13 minutes on 2 cores, estimated from `--quick` (whose sizes are 20 to 200 times
 * smaller; a cost that grows faster than the data would make it longer): loading 1,000,000 records into
 * PostgreSQL about 1.5 minutes and the index cases about 1; writing 110,000 held files twice (store and data
 * root) and recording them (one `download` that checks each against the store, 3 to 4 ms a file) about 6.5; the
 * data-root commands, 3 runs of each, and the 10 `verify` passes about 3.5. `--quick` (1,000 / 5,000 records,
 * 500 / 2,000 files) takes under a minute.
 */
import { indexCases } from './lib/scale-index.js';
import { rootCases } from './lib/scale-root.js';
import { formatBytes, markdownTable } from './lib/stats.js';

const count = (n) => n.toLocaleString('en-US');
const secondsOf = (ms) => `${(ms / 1000).toFixed(2)} s`;
const millis = (ms) => `${ms.toFixed(2)} ms`;
const runsOf = (n) => `${n} ${n === 1 ? 'run' : 'runs'}`;

/** Rows of one case: a row per measure, its value at each size and the growth from the first to the last. */
function growthRows(label, measures) {
  return measures.map(([measure, values, format], at) => {
    const [first, last] = [values[0], values.at(-1)];
    const growth = first > 0 && Number.isFinite(last / first) ? `${(last / first).toFixed(2)}×` : '–';
    return [at === 0 ? label : '', measure, ...values.map(format), growth];
  });
}

/** A run's wall, CPU and peak memory (median wall and CPU of its runs, largest peak). */
function runMeasures(runs) {
  return [
    ['wall', runs.map((run) => run.ms), secondsOf],
    ['CPU (user + system)', runs.map((run) => run.cpuMs), secondsOf],
    ['peak RSS', runs.map((run) => run.peakRss), formatBytes],
  ];
}

function indexSection(found, sizes, requests) {
  const rows = found.queries.flatMap((bySize) =>
    growthRows(`\`/query?${bySize[0].search}\``, [
      ['records answered', bySize.map((m) => m.results), count],
      [`wall, ${requests} requests`, bySize.map((m) => m.wallMs), secondsOf],
      ['p50', bySize.map((m) => m.p50), millis],
      ['p99', bySize.map((m) => m.p99), millis],
      [`server CPU, ${requests} requests`, bySize.map((m) => m.serverCpuMs), secondsOf],
      [
        `PostgreSQL CPU (all its processes), ${requests} requests`,
        bySize.map((m) => m.postgresCpuMs),
        secondsOf,
      ],
      ['server peak RSS', bySize.map((m) => m.serverPeakRss), formatBytes],
    ]),
  );
  const cli = found.cli;
  const cliRows = growthRows(
    `\`mission-data query --start-date … --end-date … --output-format json > FILE\``,
    [['records answered', cli.map((run) => run.answered), count], ...runMeasures(cli)],
  );
  const largest = count(sizes.at(-1));
  const peakWhen = found.queries.flat().every((m) => m.peakReset) ? 'while they ran' : 'since its start';
  return [
    `#### The index: \`/query\` over ${sizes.map(count).join(' and ')} records in PostgreSQL`,
    '',
    `Records of the mission's kind (12 instruments, levels l0 to l2, 20 products each, a second version of 2 of ` +
      `them a day: 264 a day from 2016-01-01), inserted straight into the index's schema (10,000 rows a ` +
      `statement; ${found.loadsMs.map((ms) => secondsOf(ms)).join(' then ')} to load and analyse, not counted), ` +
      '`mission-data serve --index postgres://…` started on them. Each query: ' +
      `${requests} requests one after another on one keep-alive connection after 5 warm-up requests, timed from ` +
      'the benchmark to the end of each body; CPU of the server process and of PostgreSQL (every backend) over ' +
      `those requests, and the server peak memory ${peakWhen}. The same day and month at both sizes: the ` +
      'answer stays the same, only the index grows.',
    '',
    markdownTable(['Case', 'Measure', ...sizes.map((n) => `${count(n)} records`), '× growth'], rows),
    '',
    `End to end through the command line, over the ${largest} records: \`mission-data query\` of every file of ` +
      'the first days (paged by the tool, 10,000 records a page), its JSON written to a file; median of ' +
      `${runsOf(cli[0]?.runs.length ?? 0)}, largest peak memory. Memory should stay bounded as the answer grows.`,
    '',
    markdownTable(
      ['Case', 'Measure', ...cli.map((run) => `${count(run.answered)} answered`), '× growth'],
      cliRows,
    ),
  ].join('\n');
}

function rootSection(bySize) {
  const sizes = bySize.map((found) => found.count);
  const rows = bySize[0].cases.flatMap((first, at) => {
    const cases = bySize.map((found) => found.cases[at]);
    return growthRows(`\`${first.command}\`, ${first.selection}`, [
      ...runMeasures(cases),
      ['requests to the service', cases.map((found) => found.requests.all), count],
    ]);
  });
  const fetched = bySize.flatMap((found) => found.cases).filter((found) => found.requests.downloads > 0);
  const growth = bySize.find((found) => found.growth.length > 0);
  const growthRowsOf = growth.growth.map((step) => [
    step.pass === 0
      ? 'after generation (one download)'
      : `after ${step.pass} \`verify\` pass${step.pass > 1 ? 'es' : ''}`,
    formatBytes(step.bytes),
    count(step.lines),
    (step.lines / growth.count).toFixed(2),
    step.run ? secondsOf(step.run.ms) : '',
    step.run ? secondsOf(step.run.cpuMs) : '',
    step.run ? formatBytes(step.run.peakRss) : '',
  ]);
  const generated = bySize
    .map(
      (found) =>
        `${count(found.count)} files in ${secondsOf(found.generateMs)} (writing ${secondsOf(found.writeMs)})`,
    )
    .join(', ');
  const tenths = bySize
    .map((found) => `${count(found.tenth.files)} files of ${count(found.count)}`)
    .join(', ');
  return [
    `#### The data root: ${sizes.map(count).join(' and ')} held files`,
    '',
    'A folder store (the reference server in the benchmark process, in-memory index) and a data root holding ' +
      'every file of it (a few bytes each, written straight to both; then one `download` that checks each ' +
      'against the store and records it verified, fetching nothing, and a `sync` of each selection for its ' +
      `state): ${generated}, not counted. A tenth: the first days held (${tenths}). ` +
      `Every run starts from the state after generation (the verified record and sync states put back); median of ` +
      `${runsOf(bySize[0].cases[0].runs.length)} (interleaved), largest peak memory, requests counted at the server.` +
      (fetched.length > 0
        ? ` **${fetched.length} runs fetched files** (\`/download\` requests): not the case meant.`
        : ''),
    '',
    markdownTable(['Case', 'Measure', ...sizes.map((n) => `${count(n)} files`), '× growth'], rows),
    '',
    `The verified record (\`.mission-data/verified.jsonl\`) over ${count(growth.count)} held files, after ` +
      'repeated `verify` passes over all of them (each from the state of the one before); it should stay bounded:',
    '',
    markdownTable(
      ['When', 'Size', 'Lines', 'Lines per file', '`verify` wall', 'CPU', 'peak RSS'],
      growthRowsOf,
    ),
  ].join('\n');
}

const MIB = 1024 * 1024;
/** The scale goals: commands over the largest data root, and the one-day query's growth with the index. */
const GOALS = {
  dayQueryGrowth: 2,
  sync: { ms: 2000, bytes: 200 * MIB },
  status: { ms: 10_000, bytes: 200 * MIB },
  queryJsonBytes: 150 * MIB,
};

/** The goals the scale cases measure: growth at most linear in what is asked, not in what is held. */
function scaleGoals(index, root, indexSizes) {
  const [day] = index.queries;
  const p50Growth = day.at(-1).p50 / day[0].p50;
  const largest = root.at(-1);
  const held = (command) =>
    largest.cases.find((one) => one.command.startsWith(command) && one.selection === 'all held');
  const within = (command, limit) => {
    const one = held(command);
    return [
      {
        goal: `Scale: \`${command}\` over ${count(largest.count)} held files within ${secondsOf(limit.ms)}`,
        measured: `${secondsOf(one.ms)} (CPU ${secondsOf(one.cpuMs)})`,
        met: one.ms <= limit.ms,
      },
      {
        goal: `Scale: \`${command}\` over ${count(largest.count)} held files within ${formatBytes(limit.bytes)}`,
        measured: formatBytes(one.peakRss),
        met: one.peakRss <= limit.bytes,
        memory: true,
      },
    ];
  };
  const query = index.cli.at(-1);
  return [
    {
      goal: `Scale: a one-day \`/query\` p50 within ${GOALS.dayQueryGrowth}× from ${count(indexSizes[0])} to ${count(indexSizes.at(-1))} records`,
      measured: `${millis(day[0].p50)} → ${millis(day.at(-1).p50)} (${p50Growth.toFixed(2)}×)`,
      met: p50Growth <= GOALS.dayQueryGrowth,
    },
    ...within('sync', GOALS.sync),
    ...within('status', GOALS.status),
    {
      goal: `Scale: \`query\` writing ${count(query.answered)} records as JSON within ${formatBytes(GOALS.queryJsonBytes)}`,
      measured: formatBytes(query.peakRss),
      met: query.peakRss <= GOALS.queryJsonBytes,
      memory: true,
    },
  ];
}

/** Runs the cases and returns their markdown section, with the tool's peak memory per case. */
export async function run({ quick = false } = {}) {
  const indexSizes = quick ? [1_000, 5_000] : [100_000, 1_000_000];
  const requests = quick ? 50 : 200;
  const repetitions = quick ? 1 : 3;
  const index = await indexCases({
    sizes: indexSizes,
    requests,
    answered: quick ? [500, 5_000] : [10_000, 100_000],
    repetitions,
  });
  const rootSizes = quick ? [500, 2_000] : [10_000, 100_000];
  const root = await rootCases({ sizes: rootSizes, repetitions, passes: 10, growthAt: rootSizes[0] });
  const markdown = [
    '### Scale: the index and the data root as they grow',
    '',
    'Each case at two sizes, and the growth from one to the other: a cost that grows as the data does shows ' +
      'the ratio of the sizes (10× at full size), one that stays flat about 1×. Commands: wall time from spawn ' +
      'to exit (Node start included), CPU of the measured process (user + system) and its peak resident memory.',
    '',
    indexSection(index, indexSizes, requests),
    '',
    rootSection(root),
    '',
  ].join('\n');
  // Its memory is judged by its own goals, per command, not by the transfers' limit.
  return { markdown, goals: scaleGoals(index, root, indexSizes) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write((await run({ quick: process.argv.includes('--quick') })).markdown);
}
