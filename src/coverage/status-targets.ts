/**
 * What a status report asks to fetch, apart from the comparison that made it: the library exports it beside the
 * report's types, and a caller that loads it loads nothing of the data root.
 */
import type { StatusReport } from './types.js';

/**
 * The storage paths a download fetches to bring the data root in step: `missing` files only, or (`update`) also
 * the newer versions of outdated files and the changed files again.
 */
export function statusTargets(report: StatusReport, mode: 'missing' | 'update'): string[] {
  const targets: string[] = [];
  for (const entry of report.entries) {
    if (entry.status === 'missing') targets.push(entry.path);
    else if (mode === 'update' && entry.status === 'outdated' && entry.newer) targets.push(entry.newer);
    else if (mode === 'update' && entry.status === 'changed') targets.push(entry.path);
  }
  return [...new Set(targets)];
}
