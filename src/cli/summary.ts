/**
 * The closing lines of a transfer: what became of the files (done, failed, not started), the bytes moved, and
 * why a batch stopped. Each part is short so no line wraps in 80 columns; a note goes on a line of its own.
 */
import { withThousands } from '../core/text.js';
import { formatBytes, formatDuration, formatRate } from './format.js';

/** What the summary is made of. */
export interface SummaryFacts {
  /** Words of each settled status, in order, e.g. `{ downloaded: 'downloaded', skipped: 'skipped (verified)' }`. */
  statuses: Readonly<Record<string, string>>;
  /** Files per status; files not started are counted apart, in `notStarted`. */
  counts: ReadonlyMap<string, number>;
  notStarted: number;
  /** Why files were not started, when the batch stopped for a reason other than an interruption. */
  notStartedWhy: string | undefined;
  /** Bytes received, those of failed files (kept for a resume) included. */
  bytes: number;
  /** Of `bytes`, those in files that did not finish (kept in their part files for the next run). */
  keptBytes: number;
  elapsedMs: number;
}

/**
 * `12 downloaded, 1,988 skipped (verified), 546 not started; 1.2 GiB in 30.0 s (40.0 MiB/s).`: only the
 * statuses some file has (every one of them zero: `0 files`), then the bytes; the files not started and the
 * bytes kept for a resume on a line of their own when there are any.
 */
export function summaryLines(facts: SummaryFacts): string[] {
  const parts = Object.entries(facts.statuses)
    .map(([status, word]) => [facts.counts.get(status) ?? 0, word] as const)
    .filter(([count]) => count > 0)
    .map(([count, word]) => `${withThousands(count)} ${word}`);
  if (facts.notStarted > 0) parts.push(`${withThousands(facts.notStarted)} not started`);
  const rate = facts.bytes > 0 ? ` (${formatRate(facts.bytes, facts.elapsedMs)})` : '';
  const lines = [
    `${parts.length > 0 ? parts.join(', ') : '0 files'}; ${formatBytes(facts.bytes)} in ${formatDuration(facts.elapsedMs)}${rate}.`,
  ];
  if (facts.keptBytes > 0) {
    lines.push(`${formatBytes(facts.keptBytes)} of unfinished files kept; the next run resumes them.`);
  }
  if (facts.notStarted > 0 && facts.notStartedWhy) {
    const files = facts.notStarted === 1 ? '1 file' : `${withThousands(facts.notStarted)} files`;
    lines.push(`Stopped: ${files} not started, as ${facts.notStartedWhy}.`);
  }
  return lines;
}
