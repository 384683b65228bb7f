/**
 * Benchmark case 5: start-up. `mission-data --help` (commander only) and a one-record `query` (which also loads
 * undici and zod and makes one request to a local server) against `node -e 0`; `await import('mission-data')` beside
 * the import of an empty ES module, the least any ES package's import costs.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, compare, compareRuns, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { markdownTable } from './lib/stats.js';
import { writeOneRecordStore } from './lib/store.js';

/** The goals: at most this many milliseconds above a bare Node.js start. */
export const STARTUP_BUDGET_MS = { help: 80, query: 150 };
/** The goal of `await import('mission-data')` in a fresh process: at most this many milliseconds in all. */
export const LIBRARY_IMPORT_MS = 80;
const LIBRARY = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** Runs the case and returns its markdown section and goals. */
export async function run({ quick = false, quiet = false } = {}) {
  const repetitions = quick ? 5 : 20;
  const storeDir = await mkdtemp(join(tmpdir(), 'mission-data-bench-startup-'));
  let server;
  try {
    writeOneRecordStore(storeDir);
    server = await startServerProcess(storeDir);
    const cases = [
      { name: 'help', label: '5. `mission-data --help`', args: ['--help'] },
      {
        name: 'query',
        label: '5. `mission-data query --instrument mag` (one record)',
        args: ['query', '--instrument', 'mag', '--url', server.url],
      },
    ];
    const rows = [];
    const goals = [];
    for (const startup of cases) {
      // Without the memory hook: preloading it would itself add to the start-up being measured.
      const result = await compare({
        repetitions,
        makeTool: () => tool(startup.args, { peakRss: false }),
        makeReference: () => command('node -e 0', process.execPath, ['-e', '0']),
      });
      const overhead = result.toolMs - result.referenceMs;
      const budget = STARTUP_BUDGET_MS[startup.name];
      rows.push([
        startup.label,
        `${result.toolMs.toFixed(1)} ms`,
        `${result.referenceMs.toFixed(1)} ms`,
        `${overhead.toFixed(1)} ms`,
        `${budget} ms`,
        overhead <= budget ? 'yes' : 'no',
      ]);
      goals.push({
        goal: `${startup.label}: within ${budget} ms of \`node -e 0\``,
        measured: `+${overhead.toFixed(1)} ms`,
        met: overhead <= budget,
      });
    }
    // The library's own import, as a script that uses it pays it: a whole time, not a difference. Beside it the
    // floor of any ES package's import, an empty module's, in the same interleaved runs.
    const emptyModule = join(storeDir, 'empty.mjs');
    writeFileSync(emptyModule, 'export {};\n');
    const importOf = (label, path) =>
      command(label, process.execPath, [
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(path)})`,
      ]);
    const imports = await compareRuns({
      repetitions,
      runs: [
        { name: 'library', make: () => importOf('import(mission-data)', LIBRARY) },
        { name: 'empty', make: () => importOf('import(empty module)', emptyModule) },
        { name: 'node', make: () => command('node -e 0', process.execPath, ['-e', '0']) },
      ],
    });
    const library = { toolMs: imports.library.ms, referenceMs: imports.node.ms };
    const emptyMs = imports.empty.ms;
    const libraryMet = library.toolMs <= LIBRARY_IMPORT_MS;
    rows.push([
      "5. `await import('mission-data')` in a fresh process",
      `${library.toolMs.toFixed(1)} ms`,
      `${library.referenceMs.toFixed(1)} ms`,
      `${(library.toolMs - library.referenceMs).toFixed(1)} ms`,
      `${LIBRARY_IMPORT_MS} ms in all`,
      quiet ? (libraryMet ? 'yes' : 'no') : 'not judged (load)',
    ]);
    rows.push([
      '5. the floor: `await import()` of an empty ES module in a fresh process',
      `${emptyMs.toFixed(1)} ms`,
      `${library.referenceMs.toFixed(1)} ms`,
      `${(emptyMs - library.referenceMs).toFixed(1)} ms`,
      '–',
      '–',
    ]);
    goals.push({
      goal: `5. \`await import('mission-data')\` in a fresh process under ${LIBRARY_IMPORT_MS} ms`,
      measured:
        `${library.toolMs.toFixed(1)} ms (node -e 0: ${library.referenceMs.toFixed(1)} ms; ` +
        `an empty ES module's import: ${emptyMs.toFixed(1)} ms)`,
      // A whole time, not a difference to node -e 0: it moves with the load like any wall-clock figure.
      met: quiet ? libraryMet : undefined,
    });
    const markdown = [
      '### Start-up: mission-data against `node -e 0`',
      '',
      `Median of ${repetitions} interleaved runs of each command and \`node -e 0\`. The query runs against the ` +
        'reference server (a process of its own) on a store of one file, which it matches; stdout goes to /dev/null.',
      '',
      markdownTable(['Case', 'mission-data', 'node -e 0', 'Difference', 'Goal', 'Goal met'], rows),
    ].join('\n');
    return { markdown, goals };
  } finally {
    await server?.close();
    rmSync(storeDir, { recursive: true, force: true });
  }
}
