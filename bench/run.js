/**
 * Benchmark driver (`npm run bench`): runs the groups of cases, prints their markdown and a table of goals and,
 * after a full run of every group, writes it all to bench/RESULTS.md. `node bench/run.js transfer capped` runs
 * only the named groups; `--quick` runs them on small sizes to check the harness (its numbers are not results).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { commandVersion } from './lib/measure.js';
import { formatBytes, markdownTable, QUIET_LOAD } from './lib/stats.js';

const GROUPS = {
  transfer: () => import('./transfer.js'),
  capped: () => import('./capped.js'),
  'query-command': () => import('./query-command.js'),
  query: () => import('./query.js'),
  startup: () => import('./startup.js'),
  liftoff: () => import('./liftoff.js'),
  backends: () => import('./backends.js'),
  'server-load': () => import('./server-load.js'),
  sync: () => import('./sync.js'),
  verify: () => import('./verify.js'),
  scale: () => import('./scale.js'),
};

/** The goal on the tool's peak resident memory, in every case that records it. */
const PEAK_MEMORY_LIMIT = 150 * 1024 * 1024;

/** How long the run waits for the load average to fall under QUIET_LOAD before it starts anyway. */
const SETTLE_MS = 3 * 60_000;
/**
 * How long each later group waits for the machine to be idle: a group can leave work behind it (engines stopping,
 * the disk writing back what it wrote), and a group started in it measured `node -e 0` at three times its usual
 * time. The 1-minute load average is no measure of that between groups: it still counts the group before for a
 * minute or more after it ended.
 */
const GROUP_SETTLE_MS = 60_000;
/** A group starts once a sample of IDLE_SAMPLE_MS finds the machine's cores idle at least this share of it. */
const QUIET_IDLE = 0.9;
const IDLE_SAMPLE_MS = 2000;

/** The share of every core's time spent idle over the next `ms`. */
async function idleShare(ms) {
  const before = cpus();
  await new Promise((resolve) => setTimeout(resolve, ms));
  let idle = 0;
  let total = 0;
  for (const [index, { times }] of cpus().entries()) {
    const earlier = before[index]?.times;
    if (!earlier) continue;
    for (const [kind, value] of Object.entries(times)) {
      const spent = value - earlier[kind];
      total += spent;
      if (kind === 'idle') idle += spent;
    }
  }
  return total > 0 ? idle / total : 1;
}

/** The idle share of the first sample at QUIET_IDLE or above, or of the last one after `waitMs`. */
async function settledIdle(waitMs) {
  const until = performance.now() + waitMs;
  let idle = await idleShare(IDLE_SAMPLE_MS);
  while (idle < QUIET_IDLE && performance.now() < until) idle = await idleShare(IDLE_SAMPLE_MS);
  return idle;
}

/** The 1-minute load average once under QUIET_LOAD, or after SETTLE_MS, whichever comes first. */
async function settledLoad() {
  const until = performance.now() + SETTLE_MS;
  while (loadavg()[0] >= QUIET_LOAD && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  return loadavg()[0];
}

/** `curl 7.88.1` from the first line of `curl --version`; likewise aria2c and openssl. */
function shortVersion(line, words = 2) {
  return line?.split(' ').slice(0, words).join(' ');
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const requested = args.filter((arg) => arg !== '--quick');
const unknown = requested.filter((name) => !(name in GROUPS));
const commands = {
  curl: shortVersion(commandVersion('curl')),
  aria2c: shortVersion(commandVersion('aria2c'), 3),
  openssl: shortVersion(commandVersion('openssl', ['version'])),
};
if (unknown.length > 0) {
  console.error(
    `Unknown benchmark group ${unknown.join(', ')}; groups are: ${Object.keys(GROUPS).join(', ')}`,
  );
  process.exitCode = 2;
} else if (!commands.curl) {
  console.error(
    'curl was not found on the PATH: the benchmarks compare mission-data with it (apt-get install curl).',
  );
  process.exitCode = 2;
} else {
  const started = performance.now();
  // Wall-clock goals are judged only when nothing else ran: the load average before the first run says so. The
  // build that `npm run bench` runs first raises it: wait a while for it to fall (not in a quick run).
  const load = quick ? loadavg()[0] : await settledLoad();
  const quiet = load < QUIET_LOAD;
  const names = requested.length > 0 ? requested : Object.keys(GROUPS);
  const command = `npm run bench${requested.length > 0 || quick ? ` -- ${args.join(' ')}` : ''}`;
  const cpu = cpus();
  const references = [commands.curl, commands.aria2c ?? 'no aria2c', commands.openssl ?? 'no openssl'];
  const header = [
    `## mission-data benchmarks, ${new Date().toISOString().slice(0, 10)}${quick ? ' (quick: small sizes, not results)' : ''}`,
    '',
    `Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB ` +
      `memory, ${process.platform} ${process.arch}, Node ${process.version}, ${references.join(', ')}. ` +
      `Command: \`${command}\`. 1-minute load average at the start: ${load.toFixed(2)} (wall-clock goals are ` +
      `judged ${quiet ? '' : 'only '}under ${QUIET_LOAD}${quiet ? '' : ': not judged in this run'}; CPU goals always). ` +
      `Each later group waits up to ${GROUP_SETTLE_MS / 1000} s for ${IDLE_SAMPLE_MS / 1000} s in which the cores are ` +
      `${QUIET_IDLE * 100} % idle; its wall-clock goals are judged only when they were.`,
  ].join('\n');
  console.log(header);
  const sections = [header];
  const goals = [];
  const peaks = [];
  for (const [at, name] of names.entries()) {
    const group = await GROUPS[name]();
    const idle = quick || at === 0 ? undefined : await settledIdle(GROUP_SETTLE_MS);
    const result = await group.run({ quick, commands, quiet: quiet && (idle ?? 1) >= QUIET_IDLE });
    // A group returns its markdown, or its markdown with the goals it measured and the tool's peak memory.
    const markdown = typeof result === 'string' ? result : result.markdown;
    const section =
      idle === undefined
        ? markdown
        : `${markdown}\n\nCores idle over the ${IDLE_SAMPLE_MS / 1000} s before this group: ${(idle * 100).toFixed(0)} %.`;
    if (typeof result !== 'string') {
      goals.push(...(result.goals ?? []));
      peaks.push(...(result.peaks ?? []));
    }
    console.log(`\n${section}`);
    sections.push(section);
  }
  // Memory goals close the table, after the speed goals of every group.
  goals.sort((a, b) => Number(Boolean(a.memory)) - Number(Boolean(b.memory)));
  if (peaks.length > 0) {
    const largest = peaks.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    goals.push({
      goal: `Peak memory of mission-data under ${formatBytes(PEAK_MEMORY_LIMIT)} in every case (${peaks.length} measured)`,
      measured: `${formatBytes(largest.bytes)} (${largest.label})`,
      met: peaks.every((peak) => peak.bytes < PEAK_MEMORY_LIMIT),
    });
  }
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  if (goals.length > 0) {
    const table = [
      '### Goals',
      '',
      markdownTable(
        ['Goal', 'Measured', 'Met'],
        goals.map((goal) => [
          goal.goal,
          goal.measured,
          goal.met === undefined ? 'not judged (load)' : goal.met ? 'yes' : '**no**',
        ]),
      ),
      '',
      `The run took ${minutes} minutes.`,
    ].join('\n');
    console.log(`\n${table}`);
    sections.push(table);
  }
  if (!quick && names.length === Object.keys(GROUPS).length) {
    writeFileSync(new URL('./RESULTS.md', import.meta.url), `${sections.join('\n\n')}\n`);
    console.error('\nWritten to bench/RESULTS.md.');
  }
  console.error(`Benchmarks took ${minutes} minutes.`);
}
