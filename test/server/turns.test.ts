/** Turns for `/upload`: a few at once, the others in arrival order, a bounded queue; and the server's default. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_UPLOAD_CONCURRENCY, Turns } from '../../src/server/turns.js';

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
  it('works on `concurrency` at once and starts the others in the order they came', async () => {
    const turns = new Turns(2, 10);
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
    for (const g of gates) g.open();
    expect(await Promise.all(all)).toEqual([0, 10, 20, 30, 40].map((value) => ({ value })));
    expect(most).toBe(2);
    expect(turns.waiting).toBe(0);
  });

  it('refuses at once past its queue, and a failed turn hands on to the next', async () => {
    const turns = new Turns(1, 1);
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
  });

  it('takes only a positive whole concurrency', () => {
    expect(() => new Turns(0)).toThrow(RangeError);
    expect(() => new Turns(1.5)).toThrow(RangeError);
  });

  it("is the server's default that `serve --help` states", () => {
    const help = execFileSync(process.execPath, ['bin/mission-data.js', 'serve', '--help'], {
      encoding: 'utf8',
    }).replace(/\s+/g, ' ');
    expect(help).toContain(`uploads worked on at once (default ${DEFAULT_UPLOAD_CONCURRENCY})`);
  });
});
