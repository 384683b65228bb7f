/**
 * The pace of a transfer's progress (`core/pace.ts`): however the process's clocks round and however late or early
 * a timer fires, a caller that reads the monotonic clock in its callback never sees two calls closer than the
 * interval, but for the final one.
 */
import { describe, expect, it } from 'vitest';
import { PROGRESS_INTERVAL_MS, progressPace } from '../../src/core/pace.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Busy for `ms` of the monotonic clock: a callback that takes its time, or a loaded machine. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Spinning on purpose.
  }
}

/** The gaps between consecutive times. */
const gaps = (times: readonly number[]) => times.slice(1).map((at, index) => at - (times[index] as number));

describe('progressPace', () => {
  it('spaces the calls at least the interval apart on the monotonic clock, timers and slow callbacks included', async () => {
    const times: number[] = [];
    const pace = progressPace<number>(() => {
      times.push(performance.now());
      // A callback that draws for a while: the next call is still a whole interval after it was made.
      busy(2);
    });
    // A count pushed every few milliseconds, at no fixed phase of the millisecond, for about 1.5 s: most calls go
    // out from the timer that releases the count held back.
    const until = performance.now() + 1500;
    for (let count = 0; performance.now() < until; count += 1) {
      pace.push(count, false);
      await sleep(3 + (count % 5));
      busy((count % 3) * 0.37);
    }
    pace.stop();
    expect(times.length).toBeGreaterThan(8);
    expect(Math.min(...gaps(times))).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS);
  });

  it('tells the first count at once, a final one at once, and the count a stall stopped at once its interval is over', async () => {
    const told: number[] = [];
    const pace = progressPace<number>((count) => told.push(count), 50);
    pace.push(1, false);
    pace.push(2, false);
    pace.push(3, false);
    expect(told).toEqual([1]);
    await sleep(80);
    expect(told).toEqual([1, 3]);
    pace.push(4, false);
    pace.push(5, true);
    expect(told).toEqual([1, 3, 5]);
    // Nothing held back is told after `stop`.
    pace.push(6, false);
    pace.push(7, false);
    pace.stop();
    await sleep(80);
    expect(told).toEqual([1, 3, 5]);
  });
});
