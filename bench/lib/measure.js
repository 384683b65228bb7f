/** Runs the commands compared by the benchmarks, timing each run and reading the tool's peak memory. */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';

/** The built command line, as `npm run build` leaves it. */
export const BIN = fileURLToPath(new URL('../../bin/mission-data.js', import.meta.url));
const PEAK_RSS_HOOK = new URL('./peak-rss.js', import.meta.url).href;
const rssFolder = mkdtempSync(join(tmpdir(), 'mission-data-bench-rss-'));
process.on('exit', () => rmSync(rssFolder, { recursive: true, force: true }));
let rssFiles = 0;

/**
 * A command line to run: `command` and `args`, with `input` written to its stdin and `env` added to the
 * environment. `label` names it in tables and errors; `timeoutMs` (default DEFAULT_TIMEOUT_MS) bounds it.
 * @typedef {{ label: string, command: string, args: string[], input?: string, env?: Record<string, string>, peakRss?: boolean, timeoutMs?: number }} Run
 */

/** A run taking longer than this is killed and fails the benchmark, rather than hold it up for ever. */
export const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/**
 * A `mission-data` run of the built bin (or of another launcher of the same program, `bin`), with its peak
 * resident memory recorded unless `peakRss` is false.
 */
export function tool(args, options = {}) {
  const { peakRss = true, bin = BIN, ...rest } = options;
  const preload = peakRss ? ['--import', PEAK_RSS_HOOK] : [];
  return {
    label: 'mission-data',
    command: process.execPath,
    args: [...preload, bin, ...args],
    peakRss,
    ...rest,
  };
}

/** Any other command line, such as the curl reference. */
export function command(label, commandName, args, options = {}) {
  return { label, command: commandName, args, ...options };
}

/**
 * The wrapper every command runs in: bash runs it, then prints with `times` the CPU its children spent (user
 * and system seconds of the command, its threads and any processes it started and waited for) on descriptor 3,
 * and exits with the command's status. Its own CPU (a few milliseconds) is on the first line, not counted.
 */
const WITH_CPU_TIMES = '"$@"; status=$?; times >&3; exit $status';

/** Milliseconds from `times`' `1m2.345s`. */
function timesMs(text) {
  const match = /^(\d+)m([\d.]+)s$/.exec(text);
  if (!match) throw new Error(`Unexpected output of bash's times: ${text}`);
  return (Number(match[1]) * 60 + Number(match[2])) * 1000;
}

/** The children's user and system CPU from `times`' two lines (`0m0.002s 0m0.000s` / `0m0.567s 0m0.163s`). */
export function childrenCpu(output) {
  const line = output.trim().split('\n')[1];
  const [user, system] = (line ?? '').trim().split(/\s+/);
  if (user === undefined || system === undefined)
    throw new Error(`Unexpected output of bash's times: ${output}`);
  return { userMs: timesMs(user), systemMs: timesMs(system) };
}

/**
 * Runs one command to its end and returns its wall time in milliseconds (spawn to exit), its CPU time (`cpuMs`,
 * user + system, threads and children included, with `userMs` and `systemMs` apart) and, for the tool, its peak
 * resident memory in bytes. A failing command throws with its stderr: a benchmark of a failing command would
 * measure nothing.
 */
export function execute(run) {
  const rssFile = run.peakRss ? join(rssFolder, `rss-${rssFiles++}`) : undefined;
  const env = { ...process.env, ...run.env, ...(rssFile ? { MISSION_DATA_BENCH_RSS_FILE: rssFile } : {}) };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // A group of its own, so that a run killed for taking too long takes the command with it, not only bash.
    const child = spawn('bash', ['-c', WITH_CPU_TIMES, 'bash', run.command, ...run.args], {
      env,
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stderr = [];
    const times = [];
    let timedOut = false;
    const timeoutMs = run.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.stdio[3].on('data', (chunk) => times.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${run.label}: could not start bash to run ${run.command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      const ms = performance.now() - started;
      clearTimeout(timer);
      if (code !== 0) {
        const text = Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(-5).join('\n');
        const outcome = timedOut
          ? `did not finish within ${timeoutMs / 1000} s and was killed`
          : code === 127
            ? `could not be started (${run.command} not found)`
            : `exited with ${signal ?? (code > 128 ? `signal ${code - 128}` : code)}`;
        reject(new Error(`${run.label} ${outcome}: ${run.args.join(' ')}\n${text}`));
        return;
      }
      let cpu;
      try {
        cpu = childrenCpu(Buffer.concat(times).toString('utf8'));
      } catch (error) {
        reject(error);
        return;
      }
      let peakRss;
      if (rssFile) {
        peakRss = Number(readFileSync(rssFile, 'utf8'));
        rmSync(rssFile, { force: true });
      }
      resolve({ ms, cpuMs: cpu.userMs + cpu.systemMs, ...cpu, peakRss });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(run.input ?? '');
  });
}

/**
 * Runs several commands `repetitions` times each (or each command's own `repetitions`), interleaved: every round
 * runs each command once, and the command that goes first moves on by one each round, so that drift in the
 * machine's state (page cache, other load) falls on all alike. `prepare(name)` runs before every single run (to
 * remove the previous run's output, say) and `verify(name)` after it (to check the output is complete); neither
 * is timed. After `prepare()` the file system is flushed (`sync`), so that writing back or discarding what the
 * previous run left behind does not fall into the next run's time. Unless `warmup` is false, one untimed run of
 * each comes first.
 *
 * `runs` is a list of `{ name, make(i), repetitions? }`; the result maps each name to its median time `ms`, its
 * median CPU time `cpuMs`, its `runs`, the largest `peakRss` of its runs and their `medianPeakRss`.
 */
export async function compareRuns({
  runs,
  repetitions,
  warmup = true,
  prepare = async () => undefined,
  verify = async () => undefined,
}) {
  const samples = new Map(runs.map((run) => [run.name, []]));
  const rounds = Math.max(...runs.map((run) => run.repetitions ?? repetitions));
  for (let i = warmup ? -1 : 0; i < rounds; i += 1) {
    const shift = ((i % runs.length) + runs.length) % runs.length;
    const order = [...runs.slice(shift), ...runs.slice(0, shift)];
    for (const run of order) {
      if (i >= (run.repetitions ?? repetitions)) continue;
      await prepare(run.name);
      execFileSync('sync');
      const result = await execute(run.make(i));
      await verify(run.name);
      if (i >= 0) samples.get(run.name).push(result);
    }
  }
  const results = {};
  for (const [name, list] of samples) {
    results[name] = {
      ms: median(list.map((run) => run.ms)),
      cpuMs: median(list.map((run) => run.cpuMs)),
      runs: list,
      peakRss: Math.max(0, ...list.map((run) => run.peakRss ?? 0)),
      medianPeakRss: median(list.map((run) => run.peakRss ?? 0)),
    };
  }
  return results;
}

/**
 * Runs `makeTool()` and `makeReference()` `repetitions` times each, interleaved and alternating which goes
 * first (see `compareRuns`, which this is for two commands named `tool` and `reference`).
 */
export async function compare({ makeTool, makeReference, ...options }) {
  const results = await compareRuns({
    ...options,
    runs: [
      { name: 'tool', make: makeTool },
      { name: 'reference', make: makeReference },
    ],
  });
  return toolAgainstReference(results);
}

/** The `tool` and `reference` runs of a `compareRuns` result, in the shape `compare` gives. */
export function toolAgainstReference(results) {
  return {
    toolMs: results.tool.ms,
    referenceMs: results.reference.ms,
    toolCpuMs: results.tool.cpuMs,
    referenceCpuMs: results.reference.cpuMs,
    toolRuns: results.tool.runs,
    referenceRuns: results.reference.runs,
    peakRss: results.tool.peakRss,
  };
}

/** The first line of `command --version` (or of `versionArgs`), or undefined when it cannot be run. */
export function commandVersion(commandName, versionArgs = ['--version']) {
  try {
    return execFileSync(commandName, versionArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')[0]
      .trim();
  } catch {
    return undefined;
  }
}
