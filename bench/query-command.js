/** Benchmark case 4: end-to-end `mission-data query` against curl of the same `/query` URL on 100,000 files. */
import { command, compare, tool } from './lib/measure.js';
import { startServerProcess } from './lib/server.js';
import { formatBytes, markdownTable } from './lib/stats.js';
import { cachedStore } from './lib/store.js';
import { STORE_FILES } from './query.js';

/** Runs the case and returns its markdown section and the tool's peak memory per command. */
export async function run({ quick = false } = {}) {
  const count = quick ? 2_000 : STORE_FILES;
  const repetitions = quick ? 2 : 10;
  const { dir } = await cachedStore(count);
  const server = await startServerProcess(dir);
  try {
    const search = 'instrument=mag';
    const results = (await (await fetch(`${server.url}/query?${search}`)).json()).body.length;
    const rows = [];
    const peaks = [];
    for (const format of ['json', 'table']) {
      const result = await compare({
        repetitions,
        makeTool: () =>
          tool(['query', '--instrument', 'mag', '--output-format', format, '--url', server.url]),
        makeReference: () => command('curl', 'curl', ['-sS', '-f', `${server.url}/query?${search}`]),
      });
      const label = `4. \`query --instrument mag --output-format ${format}\``;
      peaks.push({ label, bytes: result.peakRss });
      rows.push([
        label,
        `${result.toolMs.toFixed(0)} ms`,
        `${result.referenceMs.toFixed(0)} ms`,
        (result.referenceMs / result.toolMs).toFixed(2),
        formatBytes(result.peakRss),
      ]);
    }
    const markdown = [
      `### Query: mission-data against curl on a store of ${count.toLocaleString('en-US')} files`,
      '',
      `\`instrument=mag\` matches ${results.toLocaleString('en-US')} records. Median of ${repetitions} interleaved ` +
        'runs of each; stdout goes to /dev/null. The reference is `curl -sS -f URL/query?instrument=mag`, which ' +
        'only fetches the answer: mission-data also parses, checks and formats every record.',
      '',
      markdownTable(['Case', 'mission-data', 'curl', 'Speed ratio', 'Peak memory (mission-data)'], rows),
    ].join('\n');
    return { markdown, goals: [], peaks };
  } finally {
    await server.close();
  }
}
