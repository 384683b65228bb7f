/**
 * Turns for `/upload`: a few at once while reads are answered, many when none are, the others in arrival order,
 * a bounded queue; and the server's default.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_UPLOAD_CONCURRENCY, IDLE_UPLOAD_CONCURRENCY, Turns } from '../../src/server/turns.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolvePromise) => {
    open = resolvePromise;
  });
  return { opened, open };
}

const tick = () => new Promise((resolvePromise) => setImmediate(resolvePromise));

describe('Turns', () => {
  it('while a read is answered, works on `concurrency` uploads at once and starts the others in the order they came', async () => {
    const turns = new Turns(2, 10, 50);
    const read = gate();
    const answering = turns.reading(() => read.opened);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const all = gates.map((g, at) =>
      turns.take(async () => {
        started.push(at);
        running += 1;
        most = Math.max(most, running);
        await g.opened;
        running -= 1;
        return at * 10;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(turns.waiting).toBe(3);
    gates[1]?.open();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    // The read is answered, and no other follows it for the time reads linger: the uploads waiting start.
    read.open();
    await answering;
    await tick();
    expect(started).toEqual([0, 1, 2]);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 80));
    expect(started).toEqual([0, 1, 2, 3, 4]);
    for (const g of gates) g.open();
    expect(await Promise.all(all)).toEqual([0, 10, 20, 30, 40].map((value) => ({ value })));
    expect(most).toBe(4);
    expect(turns.waiting).toBe(0);
  });

  it('with no read to answer, runs many uploads at once, and no more than that', async () => {
    const turns = new Turns(2, 100, 50);
    const hold = gate();
    let running = 0;
    let most = 0;
    const all = Array.from({ length: IDLE_UPLOAD_CONCURRENCY + 4 }, () =>
      turns.take(async () => {
        running += 1;
        most = Math.max(most, running);
        await hold.opened;
        running -= 1;
      }),
    );
    await tick();
    expect(running).toBe(IDLE_UPLOAD_CONCURRENCY);
    expect(turns.waiting).toBe(4);
    hold.open();
    await Promise.all(all);
    expect(most).toBe(IDLE_UPLOAD_CONCURRENCY);
  });

  it('refuses at once past its queue, and a failed turn hands on to the next', async () => {
    const turns = new Turns(1, 1);
    const read = gate();
    const answering = turns.reading(() => read.opened);
    const first = gate();
    const running = turns.take(async () => {
      await first.opened;
      throw new Error('the index did not answer');
    });
    const queued = turns.take(async () => 'second');
    await tick();
    expect(await turns.take(async () => 'third')).toBe('full');
    first.open();
    await expect(running).rejects.toThrow('the index did not answer');
    expect(await queued).toEqual({ value: 'second' });
    expect(await turns.take(async () => 'fourth')).toEqual({ value: 'fourth' });
    read.open();
    await answering;
  });

  it('takes only a positive whole concurrency', () => {
    expect(() => new Turns(0)).toThrow(RangeError);
    expect(() => new Turns(1.5)).toThrow(RangeError);
  });

  it("is the server's default that `serve --help` states", () => {
    const help = execFileSync(process.execPath, ['bin/mission-data.js', 'serve', '--help'], {
      encoding: 'utf8',
    }).replace(/\s+/g, ' ');
    expect(help).toContain(
      `uploads worked on at once while queries or downloads are answered (default ${DEFAULT_UPLOAD_CONCURRENCY}; ${IDLE_UPLOAD_CONCURRENCY} with none)`,
    );
  });
});
