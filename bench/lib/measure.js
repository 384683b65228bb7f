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
 * environment. `label` names it in tables and errors.
 * @typedef {{ label: string, command: string, args: string[], input?: string, env?: Record<string, string>, peakRss?: boolean }} Run
 */

/** A `mission-data` run of the built bin, with its peak resident memory recorded unless `peakRss` is false. */
export function tool(args, options = {}) {
  const { peakRss = true, ...rest } = options;
  const preload = peakRss ? ['--import', PEAK_RSS_HOOK] : [];
  return {
    label: 'mission-data',
    command: process.execPath,
    args: [...preload, BIN, ...args],
    peakRss,
    ...rest,
  };
}

/** Any other command line, such as the curl reference. */
export function command(label, commandName, args, options = {}) {
  return { label, command: commandName, args, ...options };
}

/**
 * Runs one command to its end and returns its wall time in milliseconds (spawn to exit) and, for the tool,
 * its peak resident memory in bytes. A failing command throws with its stderr: a benchmark of a failing
 * command would measure nothing.
 */
export function execute(run) {
  const rssFile = run.peakRss ? join(rssFolder, `rss-${rssFiles++}`) : undefined;
  const env = { ...process.env, ...run.env, ...(rssFile ? { MISSION_DATA_BENCH_RSS_FILE: rssFile } : {}) };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(run.command, run.args, { env, stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = [];
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', (error) =>
      reject(new Error(`${run.label}: could not start ${run.command}: ${error.message}`)),
    );
    child.on('close', (code, signal) => {
      const ms = performance.now() - started;
      if (code !== 0) {
        const text = Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(-5).join('\n');
        reject(new Error(`${run.label} exited with ${signal ?? code}: ${run.args.join(' ')}\n${text}`));
        return;
      }
      let peakRss;
      if (rssFile) {
        peakRss = Number(readFileSync(rssFile, 'utf8'));
        rmSync(rssFile, { force: true });
      }
      resolve({ ms, peakRss });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(run.input ?? '');
  });
}

/**
 * Runs `makeTool()` and `makeReference()` `repetitions` times each, interleaved and alternating which goes
 * first so that drift in the machine's state (page cache, other load) falls on both alike. `prepare()` runs
 * before every single run (to remove the previous run's output, say) and is not timed. One untimed warm-up
 * of each comes first. After `prepare()` the file system is flushed (`sync`), so that writing back or discarding
 * what the previous run left behind does not fall into the next run's time.
 */
export async function compare({ repetitions, makeTool, makeReference, prepare = async () => undefined }) {
  const toolRuns = [];
  const referenceRuns = [];
  for (let i = -1; i < repetitions; i += 1) {
    const order = i % 2 === 0 ? ['tool', 'reference'] : ['reference', 'tool'];
    for (const which of order) {
      await prepare(which);
      execFileSync('sync');
      const result = await execute(which === 'tool' ? makeTool(i) : makeReference(i));
      if (i >= 0) (which === 'tool' ? toolRuns : referenceRuns).push(result);
    }
  }
  return {
    toolMs: median(toolRuns.map((run) => run.ms)),
    referenceMs: median(referenceRuns.map((run) => run.ms)),
    toolRuns,
    referenceRuns,
    peakRss: Math.max(...toolRuns.map((run) => run.peakRss ?? 0)),
  };
}
