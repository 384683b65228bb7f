/**
 * Benchmark case 8: what the V8 flag `--liftoff-only`, set at run time by bin/mission-data.js, buys. The same
 * commands (a one-record query, a download of many small files) run through the bin and through
 * bench/lib/launch-without-liftoff.js, which starts the same program without the flag; wall time and peak
 * resident memory of each.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkFiles } from './lib/files.js';
import { BIN, compareRuns, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { formatBytes, markdownTable } from './lib/stats.js';
import { generateStore, writeOneRecordStore } from './lib/store.js';
import { touchObjects } from './lib/warm-up.js';

const WITHOUT_FLAG = fileURLToPath(new URL('./lib/launch-without-liftoff.js', import.meta.url));

/** Sizes of a full run, and of `--quick`. */
export const SIZES = {
  full: { smallCount: 1000, smallSize: 64 * 1024, queryRepetitions: 20, downloadRepetitions: 9 },
  quick: { smallCount: 100, smallSize: 64 * 1024, queryRepetitions: 2, downloadRepetitions: 2 },
};

/** Runs the case and returns its markdown section and the tool's peak memory per command. */
export async function run({ quick = false } = {}) {
  const sizes = quick ? SIZES.quick : SIZES.full;
  const workDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-liftoff-'));
  const outDir = join(workDir, 'out');
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
        ],
        ...(measured.prepare ? { prepare: measured.prepare, verify: measured.verify } : {}),
      });
      const { with: flagged, without } = results;
      rows.push([
        measured.label,
        `${flagged.ms.toFixed(0)} ms, ${formatBytes(flagged.medianPeakRss)}`,
        `${without.ms.toFixed(0)} ms, ${formatBytes(without.medianPeakRss)}`,
        `${(without.ms - flagged.ms).toFixed(0)} ms (${(without.ms / flagged.ms).toFixed(2)}×)`,
        formatBytes(without.medianPeakRss - flagged.medianPeakRss),
      ]);
      peaks.push({ label: measured.label, bytes: flagged.peakRss });
    }
    const binSetsFlag = readFileSync(BIN, 'utf8').includes("setFlagsFromString('--liftoff-only')");
    const note = binSetsFlag
      ? []
      : [
          '',
          'Note: bin/mission-data.js does not set `--liftoff-only` (any more): both columns run without the flag.',
        ];
    if (!binSetsFlag) console.error(note[1]);
    const markdown = [
      '### V8 flag `--liftoff-only`: with it (bin/mission-data.js) and without it',
      '',
      'undici parses HTTP in WebAssembly; with `--liftoff-only` V8 keeps its baseline code and never optimises ' +
        'the module in the background. "Without" runs the same program through bench/lib/launch-without-liftoff.js, ' +
        `which imports dist/mission-data.js and calls \`main\` without setting the flag. Median wall time and ` +
        `median peak resident memory of ${sizes.queryRepetitions} (query) and ${sizes.downloadRepetitions} ` +
        '(download) interleaved runs of each, after one warm-up run of each, against the reference server on ' +
        'loopback. Saved = without less with.',
      ...note,
      '',
      markdownTable(
        ['Case', 'With --liftoff-only', 'Without', 'Time saved by the flag', 'Memory saved by the flag'],
        rows,
      ),
    ].join('\n');
    return { markdown, goals: [], peaks };
  } finally {
    for (const server of servers) await server.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}
