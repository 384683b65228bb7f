/**
 * Benchmark case 8: what the V8 flags bin/mission-data.js sets at run time (src/cli/v8-flags.ts) buy. The same
 * commands (a one-record query, a download of many small files) run through the bin, through
 * bench/lib/launch-without-liftoff.js (the same program without `--liftoff-only`) and through
 * bench/lib/launch-optimising-early.js (without the first half second's later optimisation); wall time, CPU time and
 * peak resident memory of each.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchFolder, checkFiles } from './lib/files.js';
import { BIN, compareRuns, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { formatBytes, markdownTable } from './lib/stats.js';
import { generateStore, writeOneRecordStore } from './lib/store.js';
import { touchObjects } from './lib/warm-up.js';

const WITHOUT_FLAG = fileURLToPath(new URL('./lib/launch-without-liftoff.js', import.meta.url));
const OPTIMISING_EARLY = fileURLToPath(new URL('./lib/launch-optimising-early.js', import.meta.url));

/** Sizes of a full run, and of `--quick`. */
export const SIZES = {
  full: { smallCount: 1000, smallSize: 64 * 1024, queryRepetitions: 20, downloadRepetitions: 9 },
  quick: { smallCount: 100, smallSize: 64 * 1024, queryRepetitions: 2, downloadRepetitions: 2 },
};

/** Runs the case and returns its markdown section and the tool's peak memory per command. */
export async function run({ quick = false } = {}) {
  const sizes = quick ? SIZES.quick : SIZES.full;
  const workDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-liftoff-'));
  const batchDir = batchFolder('mission-data-bench-liftoff-');
  const outDir = join(batchDir, 'out');
  const servers = [];
  try {
    const oneRecordDir = join(workDir, 'one-record');
    writeOneRecordStore(oneRecordDir);
    const smallDir = join(workDir, 'small');
    const { keys } = await generateStore(smallDir, { count: sizes.smallCount, size: sizes.smallSize });
    const queryServer = await startServerProcess(oneRecordDir);
    servers.push(queryServer);
    const smallServer = await startServerProcess(smallDir);
    servers.push(smallServer);
    await touchObjects(smallServer.url, keys);
    const cases = [
      {
        label: '8. `query --instrument mag` (one record)',
        args: ['query', '--instrument', 'mag', '--url', queryServer.url],
        repetitions: sizes.queryRepetitions,
      },
      {
        label: `8. \`download - --concurrency 16\` of ${keys.length} files of ${formatBytes(sizes.smallSize)}`,
        args: ['download', '-', '--concurrency', '16', '--url', smallServer.url, '--data-dir', outDir],
        input: `${keys.join('\n')}\n`,
        repetitions: sizes.downloadRepetitions,
        prepare: () => {
          rmSync(outDir, { recursive: true, force: true });
          mkdirSync(outDir, { recursive: true });
        },
        verify: () => checkFiles('mission-data', outDir, { count: keys.length, size: sizes.smallSize }),
      },
    ];
    const rows = [];
    const peaks = [];
    for (const measured of cases) {
      const options = measured.input ? { input: measured.input } : {};
      const results = await compareRuns({
        repetitions: measured.repetitions,
        runs: [
          { name: 'with', make: () => tool(measured.args, options) },
          { name: 'without', make: () => tool(measured.args, { ...options, bin: WITHOUT_FLAG }) },
          { name: 'early', make: () => tool(measured.args, { ...options, bin: OPTIMISING_EARLY }) },
        ],
        ...(measured.prepare ? { prepare: measured.prepare, verify: measured.verify } : {}),
      });
      rows.push(flagRow(measured.label, results));
      peaks.push({ label: measured.label, bytes: results.with.peakRss });
    }
    const bin = readFileSync(BIN, 'utf8');
    const unset = ['keepWasmBaseline', 'optimiseLaterAtFirst'].filter((call) => !bin.includes(`${call}();`));
    const note =
      unset.length === 0 ? [] : ['', `Note: bin/mission-data.js does not call ${unset.join(' nor ')}.`];
    if (unset.length > 0) console.error(note[1]);
    const markdown = [
      '### V8 flags set by the bin: `--liftoff-only`, and on Node 20 optimisation later in the first half second',
      '',
      'undici parses HTTP in WebAssembly; with `--liftoff-only` V8 keeps its baseline code and never optimises ' +
        'the module in the background. On Node 20 (V8 11.3) the bin also asks V8 to wait four times its usual ' +
        "run before optimising a function during a command's first half second (`optimiseLaterAtFirst`, " +
        'src/cli/v8-flags.ts). The same program runs through the bin, through bench/lib/launch-without-liftoff.js ' +
        '(all but `--liftoff-only`) and through bench/lib/launch-optimising-early.js (all but the later ' +
        `optimisation). Median wall time, CPU time and peak resident memory of ${sizes.queryRepetitions} (query) ` +
        `and ${sizes.downloadRepetitions} (download) interleaved runs of each, after one warm-up run of each, ` +
        'against the reference server on loopback; the download writes into a folder in memory, as the batches of ' +
        'the transfer group do (bench/lib/files.js `batchFolder`). Saved = without less with.',
      ...note,
      '',
      markdownTable(
        [
          'Case',
          'The bin: wall, CPU, memory',
          'Without --liftoff-only',
          'Saved by --liftoff-only: time, memory',
          'Optimising from the start',
          'Saved by optimising later: time, CPU',
        ],
        rows,
      ),
    ].join('\n');
    return { markdown, goals: [], peaks };
  } finally {
    for (const server of servers) await server.close();
    rmSync(workDir, { recursive: true, force: true });
    rmSync(batchDir, { recursive: true, force: true });
  }
}

/** A case's row: each launcher's medians, and what each flag saves against the bin. */
function flagRow(label, { with: flagged, without, early }) {
  const measured = (run) =>
    `${run.ms.toFixed(0)} ms, ${(run.cpuMs / 1000).toFixed(2)} s, ${formatBytes(run.medianPeakRss)}`;
  const saved = (other, key) =>
    `${(other[key] - flagged[key]).toFixed(0)} ms (${(other[key] / flagged[key]).toFixed(2)}×)`;
  return [
    label,
    measured(flagged),
    measured(without),
    `${saved(without, 'ms')}, ${formatBytes(without.medianPeakRss - flagged.medianPeakRss)}`,
    measured(early),
    `${saved(early, 'ms')}, ${saved(early, 'cpuMs')}`,
  ];
}
