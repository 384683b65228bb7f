/**
 * Benchmark driver (`npm run bench`): runs each case module and prints its markdown section.
 * `node bench/run.js query` runs only the named cases. Each case module exports `run()` returning markdown.
 */
import { cpus, totalmem } from 'node:os';

const CASES = {
  query: () => import('./query.js'),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in CASES));
if (unknown.length > 0) {
  console.error(`Unknown benchmark case ${unknown.join(', ')}; cases are: ${Object.keys(CASES).join(', ')}`);
  process.exitCode = 2;
} else {
  const names = requested.length > 0 ? requested : Object.keys(CASES);
  console.log(`## mission-data benchmarks (${new Date().toISOString().slice(0, 10)})`);
  console.log('');
  console.log(
    `Machine: ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory, Node ${process.version}. Command: \`npm run bench\`.`,
  );
  for (const name of names) {
    const module = await CASES[name]();
    console.log('');
    console.log(await module.run());
  }
}
