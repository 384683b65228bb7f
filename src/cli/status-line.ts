/**
 * Pieces of the refreshing transfer line: whether it may animate, the rate over recent time, and what stands in
 * for the time left while nothing arrives.
 */
import { formatBar } from './format.js';

/** Where progress goes (the command's stderr). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Rate and time left are measured over this much recent time, so they follow a link that speeds up or stalls. */
const RATE_WINDOW_MS = 5000;
/** After this long without a byte, the line says `stalled N s` instead of a time left. */
export const STALL_MS = 3000;

/**
 * Whether a refreshing line may be drawn on `stream`: ora's own rule (its `isEnabled` default: a TTY, `TERM`
 * not `dumb`, no `CI` variable), asked of ora itself so the spinner of `query` and the transfer line agree.
 * ora is loaded only for a TTY: pipes never pay for it.
 */
export async function canAnimate(stream: ProgressStream): Promise<boolean> {
  if (!stream.isTTY) return false;
  const { default: ora } = await import('ora');
  return ora({ stream: stream as NodeJS.WritableStream }).isEnabled;
}

/** Bytes per second over the last few seconds, from samples of a running count. */
export class RateMeter {
  private readonly samples: Array<{ at: number; count: number }> = [];

  add(at: number, count: number): void {
    this.samples.push({ at, count });
    while (this.samples.length > 2 && at - (this.samples[0]?.at ?? at) > RATE_WINDOW_MS) this.samples.shift();
  }

  /** Bytes per ms, or undefined before there is a span to measure over. */
  perMs(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at - first.at < 200) return undefined;
    return (last.count - first.count) / (last.at - first.at);
  }
}

export interface InFlight {
  /** Bytes transferred so far. */
  bytes: number;
  /** Size of the file, when known. */
  total: number | undefined;
  /** Bytes hashed so far, while the file's MD5 is being computed (uploads). */
  hashed: number | undefined;
  /** The process this file waits for, while another one is downloading it. */
  waitingFor?: number | undefined;
}

/** The process a batch waits for, while every file in flight waits for another process or has no byte yet. */
export function waitingFor(active: readonly InFlight[]): number | undefined {
  const waiting = active.find((file) => file.waitingFor !== undefined);
  if (waiting && active.every((file) => file.bytes === 0 || file.waitingFor !== undefined))
    return waiting.waitingFor;
  return undefined;
}

/**
 * What stands in for the time left while nothing arrives: another process holds a file, no byte came yet
 * (`connecting…`), or none for `STALL_MS` (`stalled N s`, while the rate decays over its window).
 */
export function waitNote(
  active: readonly InFlight[],
  batch: { bytes: number; quietMs: number; unfinished: boolean },
): string | undefined {
  const pid = waitingFor(active);
  if (pid !== undefined) return `waiting for process ${pid} that is downloading the same file`;
  if (!batch.unfinished || active.some((file) => file.hashed !== undefined)) return undefined;
  if (batch.bytes === 0) return 'connecting…';
  if (batch.quietMs >= STALL_MS) return `stalled ${Math.floor(batch.quietMs / 1000)} s`;
  return undefined;
}

/**
 * Time left of work done in two passes over the same bytes (an upload's MD5 pass, then its sending): what is left
 * of each at its own rate; unknown until each pass still to run has a rate.
 */
export function bothPassesLeft(
  total: number,
  first: { done: number; perMs: number | undefined },
  second: { done: number; perMs: number | undefined },
): number | undefined {
  let left = 0;
  for (const pass of [first, second]) {
    const bytes = Math.max(0, total - pass.done);
    if (bytes === 0) continue;
    if (!pass.perMs) return undefined;
    left += bytes / pass.perMs;
  }
  return left;
}

const BAR_MAX = 30;
const BAR_MIN = 10;

/**
 * The transfer line as it fits `width`: the head, its bar, then as much of the tail (rate, time left) as fits;
 * the bar goes first when room is short, then the tail from its end; at worst the file counts alone. A `kept`
 * note (the process a file waits for) says why nothing moves: it goes last, after the bar, the tail and the
 * byte counts, and shortens to its `short` form before it goes.
 */
export function fitStatusLine(
  line: {
    files: string;
    head: string;
    tail: readonly string[];
    fraction: number;
    kept?: { long: string; short: string } | undefined;
  },
  width: number,
): string {
  const { files, head, tail, fraction, kept } = line;
  // The bar keeps one width for a given terminal, so the line does not jump as its numbers change.
  const bar = Math.min(BAR_MAX, Math.max(BAR_MIN, width - 60));
  if (kept) {
    const after = `  ${kept.long}`;
    for (const text of [
      `${head} ${formatBar(fraction, bar)}${after}`,
      `${head}${after}`,
      `${files}${after}`,
      `${files}  ${kept.short}`,
    ]) {
      if (text.length <= width) return text;
    }
    return files;
  }
  for (let keep = tail.length; keep >= 0; keep -= 1) {
    const after = keep > 0 ? `  ${tail.slice(0, keep).join('  ')}` : '';
    if (head.length + bar + 3 + after.length <= width) return `${head} ${formatBar(fraction, bar)}${after}`;
    if (head.length + after.length <= width) return `${head}${after}`;
  }
  return head.length <= width ? head : files;
}
