/**
 * Benchmark driver (`npm run bench`): runs the cases, prints their markdown and, after a full run of every
 * case, writes it to bench/RESULTS.md. `node bench/run.js transfer query` runs only the named cases;
 * `--quick` runs them on small sizes to check the harness (its numbers are not results).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { markdownTable } from './lib/stats.js';

const CASES = {
  transfer: () => import('./transfer.js'),
  'query-command': () => import('./query-command.js'),
  query: () => import('./query.js'),
  startup: () => import('./startup.js'),
};

function curlVersion() {
  try {
    return execFileSync('curl', ['--version'], { encoding: 'utf8' })
      .split('\n')[0]
      .split(' ')
      .slice(0, 2)
      .join(' ');
  } catch {
    return undefined;
  }
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const requested = args.filter((arg) => arg !== '--quick');
const unknown = requested.filter((name) => !(name in CASES));
const curl = curlVersion();
if (unknown.length > 0) {
  console.error(`Unknown benchmark case ${unknown.join(', ')}; cases are: ${Object.keys(CASES).join(', ')}`);
  process.exitCode = 2;
} else if (!curl) {
  console.error(
    'curl was not found on the PATH: the benchmarks compare mission-data with it (apt-get install curl).',
  );
  process.exitCode = 2;
} else {
  const names = requested.length > 0 ? requested : Object.keys(CASES);
  const command = `npm run bench${requested.length > 0 || quick ? ` -- ${args.join(' ')}` : ''}`;
  const cpu = cpus();
  const header = [
    `## mission-data benchmarks, ${new Date().toISOString().slice(0, 10)}${quick ? ' (quick: small sizes, not results)' : ''}`,
    '',
    `Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB ` +
      `memory, ${process.platform} ${process.arch}, Node ${process.version}, ${curl}. Command: \`${command}\`.`,
  ].join('\n');
  console.log(header);
  const sections = [header];
  const goals = [];
  for (const name of names) {
    const module = await CASES[name]();
    const result = await module.run({ quick });
    // A case returns its markdown, or its markdown and the goals it measured.
    const section = typeof result === 'string' ? result : result.markdown;
    if (typeof result !== 'string') goals.push(...result.goals);
    console.log(`\n${section}`);
    sections.push(section);
  }
  if (goals.length > 0) {
    const table = [
      '### Goals',
      '',
      markdownTable(
        ['Goal', 'Measured', 'Met'],
        goals.map((goal) => [goal.goal, goal.measured, goal.met ? 'yes' : '**no**']),
      ),
    ].join('\n');
    console.log(`\n${table}`);
    sections.push(table);
  }
  if (!quick && names.length === Object.keys(CASES).length) {
    writeFileSync(new URL('./RESULTS.md', import.meta.url), `${sections.join('\n\n')}\n`);
    console.error('\nWritten to bench/RESULTS.md.');
  }
}
