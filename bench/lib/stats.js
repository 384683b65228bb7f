/** Small statistics and formatting helpers for benchmark tables. */

/** The `p`-th percentile (0-100) of `samples`, nearest rank. */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

/** A markdown table from a header row and rows of cells. */
export function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Bytes as KiB/MiB with one decimal (negative amounts with a minus sign). */
export function formatBytes(bytes) {
  if (bytes < 0) return `-${formatBytes(-bytes)}`;
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The median of `samples`. */
export function median(samples) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A goal on a speed ratio (reference time / tool time): met at `minimum` or above. */
export function ratioGoal(goal, ratio, minimum) {
  return {
    goal: `${goal} ≥ ${minimum.toFixed(2)}×`,
    measured: `${ratio.toFixed(2)}×`,
    met: ratio >= minimum,
  };
}

/** Wall time in seconds with two decimals. */
export function seconds(ms) {
  return (ms / 1000).toFixed(2);
}

/** The fastest and slowest of some runs, in seconds: `0.81–2.80 s`. */
export function spread(runs) {
  const times = runs.map((run) => run.ms);
  return `${seconds(Math.min(...times))}–${seconds(Math.max(...times))} s`;
}

/**
 * A goal on CPU time: the tool's CPU seconds over the reference's, met at `maximum` or below. CPU time (user +
 * system, threads and children included) moves far less with the machine's load than wall time does.
 */
export function cpuGoal(goal, toolCpuMs, referenceCpuMs, maximum) {
  const ratio = toolCpuMs / referenceCpuMs;
  return {
    goal: `${goal} ≤ ${maximum.toFixed(2)}×`,
    measured: `${ratio.toFixed(2)}× (${seconds(toolCpuMs)} s against ${seconds(referenceCpuMs)} s)`,
    met: ratio <= maximum,
  };
}

/**
 * A goal on a wall-time speed ratio (reference time / tool time, met at `minimum` or above), judged only when
 * the machine was quiet (`judged`): on a loaded machine every wall-clock figure moves with the load.
 */
export function wallGoal(goal, ratio, minimum, judged) {
  const measured = ratioGoal(goal, ratio, minimum);
  return judged ? measured : { ...measured, met: undefined };
}

/** CPU seconds of a run: `1.23 s (0.95 + 0.28)`, user and system apart. */
export function cpuSeconds(runs) {
  const cpu = median(runs.map((run) => run.cpuMs));
  const user = median(runs.map((run) => run.userMs));
  const system = median(runs.map((run) => run.systemMs));
  return `${seconds(cpu)} s (${seconds(user)} + ${seconds(system)})`;
}

/** The 1-minute load average under which wall-clock goals are judged. */
export const QUIET_LOAD = 0.5;
