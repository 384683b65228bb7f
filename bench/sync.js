/**
 * Benchmark case: a second `sync` of 10,000 files held (ingested over many past days) with 10 new ones, beside
 * `download --only-missing` of the same selection: requests to the service and wall time.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReferenceServer } from '../dist/server/index.js';
import { execute, tool } from './lib/measure.js';
import { markdownTable, median } from './lib/stats.js';
import { generateStore } from './lib/store.js';

const DAY_MS = 86_400_000;
/** Every file of the generated store starts on or after this day. */
const SELECTION = ['--start-date', '20240101'];

/** A new file of the archive: a product of its own, so it is new whatever the store holds. */
function newKey(index) {
  const day = String(index + 1).padStart(2, '0');
  return `imap/mag/l2/2030/01/imap_mag_l2_fresh_203001${day}_203001${day}_v01-00.cdf`;
}

/** Runs the case and returns its markdown section. */
export async function run({ quick = false } = {}) {
  const count = quick ? 1_000 : 10_000;
  const fresh = 10;
  const repetitions = quick ? 1 : 5;
  const work = mkdtempSync(join(tmpdir(), 'mission-data-bench-sync-'));
  const store = join(work, 'store');
  const data = join(work, 'data');
  try {
    const { keys } = await generateStore(store, { count, size: 64 });
    // Ingested over many past days: the store's times are the index's ingestion dates at start.
    const now = Date.now();
    keys.forEach((key, index) => {
      const time = new Date(now - (1 + (index % 300)) * DAY_MS);
      utimesSync(join(store, ...key.split('/')), time, time);
    });
    let requests = [];
    const server = await startReferenceServer({
      store,
      port: 0,
      log: (entry) => requests.push(entry),
    });
    try {
      const url = server.url;
      const sync = ['sync', ...SELECTION, '--url', url, '--data-dir', data, '--quiet'];
      const onlyMissing = [
        'download',
        ...SELECTION,
        '--only-missing',
        '--url',
        url,
        '--data-dir',
        data,
        '--quiet',
      ];
      // The first sync holds every file (not timed); then the archive gains the new files.
      await execute(tool(sync, { peakRss: false }));
      const stateDir = join(data, '.mission-data');
      const stateFile = readdirSync(stateDir).find((name) => /^sync-.*\.json$/.test(name));
      copyFileSync(join(stateDir, stateFile), join(work, 'state.json'));
      for (let index = 0; index < fresh; index += 1) {
        const path = join(store, ...newKey(index).split('/'));
        mkdirSync(join(path, '..'), { recursive: true });
        writeFileSync(path, `fresh ${index}\n`);
      }
      await server.reindex();
      /** Back to "10,000 held, 10 new": the new files removed here and the sync state as after the first run. */
      const reset = () => {
        for (let index = 0; index < fresh; index += 1)
          rmSync(join(data, ...newKey(index).split('/')), { force: true });
        copyFileSync(join(work, 'state.json'), join(stateDir, stateFile));
      };
      const measure = async (args) => {
        const times = [];
        const counts = [];
        for (let round = 0; round < repetitions; round += 1) {
          reset();
          requests = [];
          const { ms } = await execute(tool(args, { peakRss: false }));
          times.push(ms);
          counts.push({
            all: requests.length,
            downloads: requests.filter((entry) => entry.path.startsWith('/download')).length,
            queries: requests.filter((entry) => entry.path.startsWith('/query')).length,
          });
          for (let index = 0; index < fresh; index += 1) {
            if (!existsSync(join(data, ...newKey(index).split('/'))))
              throw new Error(`${args[0]} missed a new file`);
          }
        }
        return { ms: median(times), counts: counts[counts.length - 1] };
      };
      const rows = [];
      for (const [label, args] of [
        ['`sync` (second run)', sync],
        ['`download --only-missing`', onlyMissing],
      ]) {
        const result = await measure(args);
        rows.push([
          label,
          `${result.ms.toFixed(0)} ms`,
          String(result.counts.all),
          String(result.counts.queries),
          String(result.counts.downloads),
        ]);
      }
      return [
        `### Sync: a second run over ${count.toLocaleString('en-US')} files held with ${fresh} new`,
        '',
        `${count.toLocaleString('en-US')} files held (ingested over 300 past days, fetched by a first sync) and ` +
          `${fresh} new files in the archive. Median wall time of ${repetitions} runs (the whole command, Node's ` +
          'start included); requests counted at the server (a query page, each `/download`, each object GET).',
        '',
        markdownTable(['Case', 'Wall time', 'Requests', 'Queries', '/download'], rows),
      ].join('\n');
    } finally {
      await server.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
