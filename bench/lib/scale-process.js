/**
 * What a running process spent, read from Linux's /proc: its CPU and its peak resident memory, for the processes
 * the scale benchmarks measure while they serve (the reference server, PostgreSQL) rather than from spawn to exit.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { BIN } from './measure.js';
import { startListeningProcess } from './server.js';

/** Clock ticks a second, the unit of /proc/<pid>/stat's times. */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/<pid>/stat after the command's name (the first is the state), or undefined once gone. */
function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** User + system CPU of `pid` in milliseconds (its threads included, not its children). */
export function cpuMsOf(pid) {
  const fields = statFields(pid);
  if (!fields) return 0;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

/**
 * User + system CPU in milliseconds of `pid` and of every process it started: those that ended and were waited
 * for (its cutime and cstime) and those still running, such as the backends a PostgreSQL postmaster forks per
 * connection.
 */
export function treeCpuMs(pid) {
  const own = statFields(pid);
  if (!own) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS;
}

/** Starts the high-water mark of `pid`'s resident memory again from its present size, where Linux allows it. */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The peak resident memory of `pid` in bytes (VmHWM), since its start or the last `resetPeakRss`. */
export function peakRssOf(pid) {
  const match = /^VmHWM:\s*(\d+)\s*kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/**
 * Starts `mission-data serve` with `args` as a process of its own and resolves once it listens, with its URL,
 * its process id (to read what it spends) and a `close`.
 */
export function startServe(args, env = process.env) {
  return startListeningProcess([BIN, 'serve', '--port', '0', '--quiet', ...args], 'mission-data serve', env);
}
