/**
 * The client side of the scale benchmarks: a data root holding every file of a generated archive (a folder store
 * behind the in-process reference server, in-memory index), and the commands that read it (`status`, `sync`
 * with nothing new, `coverage`, `verify`, `download` of files all held) over all of it and over a tenth; then the
 * verified record's size after repeated `verify` passes.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startReferenceServer } from '../../dist/server/index.js';
import { compareRuns, execute, tool } from './measure.js';
import { dateOf, daysOf, FILES_PER_DAY, writeArchive } from './scale-data.js';

/** Generating a data root of 100,000 files fetches nothing, but checks each against the store: minutes. */
const GENERATION_TIMEOUT_MS = 30 * 60_000;
const STATE_FOLDER = '.mission-data';
/** The record of verified downloads in the state folder (`src/data-root/state-folder.ts`). */
const VERIFIED_RECORD = 'verified.jsonl';

/**
 * The selections of each command: every file held, and the first tenth of the days held (`files` of them).
 */
function selections(count) {
  const days = Math.max(1, Math.round(daysOf(count) / 10));
  return [
    { name: 'all', label: 'all held', files: count, args: ['--start-date', dateOf(0)] },
    {
      name: 'tenth',
      label: 'a tenth (date range)',
      days,
      files: Math.min(count, days * FILES_PER_DAY),
      args: ['--start-date', dateOf(0), '--end-date', dateOf(days - 1)],
    },
  ];
}

/** The commands measured, each over a selection's arguments. */
const COMMANDS = [
  { name: 'status', args: (selection) => ['status', ...selection] },
  { name: 'sync', label: 'sync (nothing new)', args: (selection) => ['sync', ...selection] },
  { name: 'coverage', args: (selection) => ['coverage', ...selection] },
  { name: 'verify', args: (selection) => ['verify', ...selection] },
  { name: 'download', args: (selection) => ['download', ...selection] },
];

/** The state files a run may change (the verified record, the sync states): kept, to put back before each run. */
function stateFiles(data) {
  const folder = join(data, STATE_FOLDER);
  return readdirSync(folder).filter((name) => name === VERIFIED_RECORD || /^sync-.*\.json$/.test(name));
}

/** Size in bytes and lines of the verified record. */
function recordSize(data) {
  const path = join(data, STATE_FOLDER, VERIFIED_RECORD);
  const text = readFileSync(path, 'utf8');
  return { bytes: statSync(path).size, lines: text.split('\n').filter(Boolean).length };
}

/**
 * Makes the tool know the files written to the data root under `work` (not measured): they are there, unknown
 * to it, so one download checks each against the store and records it verified (nothing is fetched), and a sync
 * of each selection then has its state. Keeps the state files and returns a `restore` that puts them back.
 */
async function recordRoot(work, server, chosen) {
  const data = join(work, 'data');
  const kept = join(work, 'kept');
  const common = ['--url', server.url, '--data-dir', data, '--quiet'];
  const options = { peakRss: false, timeoutMs: GENERATION_TIMEOUT_MS };
  await execute(tool(['download', ...chosen[0].args, ...common], options));
  for (const selection of chosen) await execute(tool(['sync', ...selection.args, ...common], options));
  mkdirSync(kept);
  const state = stateFiles(data);
  for (const name of state) copyFileSync(join(data, STATE_FOLDER, name), join(kept, name));
  return () => {
    for (const name of state) copyFileSync(join(kept, name), join(data, STATE_FOLDER, name));
  };
}

/**
 * One data root of `count` files: generated, then every command over every selection, `repetitions`
 * interleaved runs each from the same state; with `passes`, that many `verify` passes after, the record
 * measured after each.
 */
async function rootCase(count, { repetitions, passes }) {
  const work = mkdtempSync(join(tmpdir(), 'mission-bench-scale-root-'));
  const store = join(work, 'store');
  const data = join(work, 'data');
  const chosen = selections(count);
  let requests = [];
  let server;
  try {
    const started = performance.now();
    writeArchive(count, { store, roots: [data] });
    const writeMs = performance.now() - started;
    server = await startReferenceServer({ store, port: 0, log: (entry) => requests.push(entry) });
    const restore = await recordRoot(work, server, chosen);
    const generateMs = performance.now() - started;
    const initial = recordSize(data);
    const common = ['--url', server.url, '--data-dir', data, '--quiet'];
    const counts = {};
    const results = await compareRuns({
      repetitions,
      warmup: false,
      prepare: () => {
        restore();
        requests = [];
      },
      verify: (name) => {
        counts[name] = {
          all: requests.length,
          downloads: requests.filter((entry) => entry.path.startsWith('/download')).length,
        };
      },
      runs: chosen.flatMap((selection) =>
        COMMANDS.map((command) => ({
          name: `${command.name} ${selection.name}`,
          make: () => tool([...command.args(selection.args), ...common]),
        })),
      ),
    });
    const cases = chosen.flatMap((selection) =>
      COMMANDS.map((command) => {
        const name = `${command.name} ${selection.name}`;
        return {
          command: command.label ?? command.name,
          selection: selection.label,
          ...results[name],
          requests: counts[name],
        };
      }),
    );
    const growth = [];
    if (passes) {
      restore();
      growth.push({ pass: 0, ...initial });
      for (let pass = 1; pass <= passes; pass += 1) {
        const run = await execute(tool(['verify', ...chosen[0].args, ...common]));
        if (pass === 1 || pass === passes) growth.push({ pass, ...recordSize(data), run });
      }
    }
    return { count, writeMs, generateMs, cases, growth, tenth: chosen[1] };
  } finally {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs the data-root cases at each of `sizes` (held files), the record's growth at `growthAt`. */
export async function rootCases({ sizes, repetitions, passes, growthAt }) {
  const bySize = [];
  for (const count of sizes)
    bySize.push(await rootCase(count, { repetitions, passes: count === growthAt ? passes : 0 }));
  return bySize;
}
