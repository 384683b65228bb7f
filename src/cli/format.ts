/** Sizes, durations, rates and bars as the transfer commands print them. */

import { formatBytes } from '../core/text.js';

export { formatBytes };

/** `1234` -> `1.2 s`; `75000` -> `1 min 15 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Time left, in whole seconds: `7 s left`, `2 min 5 s left`, `1 h 3 min left`. */
export function formatTimeLeft(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} s left`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s left`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min left`;
}

/** Bytes per second, e.g. `12.3 MiB/s`. */
export function formatRate(bytes: number, ms: number): string {
  return `${formatBytes(ms > 0 ? Math.round((bytes * 1000) / ms) : 0)}/s`;
}

/** `33.1/500.0 MiB`, or `900.0 KiB/1.2 GiB` when the units differ. */
export function formatPair(done: number, total: number): string {
  const [doneValue, doneUnit] = formatBytes(done).split(' ');
  const [totalValue, totalUnit] = formatBytes(total).split(' ');
  return doneUnit === totalUnit
    ? `${doneValue}/${totalValue} ${totalUnit}`
    : `${formatBytes(done)}/${formatBytes(total)}`;
}

/** `[#####.....]` for a fraction from 0 to 1, `width` characters inside the brackets. */
export function formatBar(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
