import { describe, expect, it } from 'vitest';
import {
  ConnectionController,
  moreConnectionsCanPay,
  ThroughputWindow,
} from '../../src/download/ranged/adaptive.js';

const MIB = 1024 * 1024;

/** Feeds the controller the throughput `link(connections)` gives until it holds; returns the steps it took. */
function settle(controller: ConnectionController, link: (connections: number) => number): number[] {
  const steps = [controller.connections];
  for (let round = 0; round < 20 && controller.observe(link(controller.connections)) === 'grow'; round += 1)
    steps.push(controller.connections);
  return steps;
}

describe('ConnectionController', () => {
  it('holds at one for good when one connection keeps the thread too busy for more to pay', () => {
    // Busy 80 % of the time: more connections could carry at most 1.25x, short of the 1.3x a doubling must.
    expect(moreConnectionsCanPay(0.8)).toBe(false);
    expect(moreConnectionsCanPay(0.75)).toBe(true);
    expect(moreConnectionsCanPay(0.05)).toBe(true);
    // A stricter gain asks for an idler thread.
    expect(moreConnectionsCanPay(0.6, 1)).toBe(false);
    const busy = new ConnectionController({ max: 32, initial: 8 });
    expect(busy.observeBusy(0.95)).toBe('hold');
    expect(busy.connections).toBe(1);
    expect(busy.settled).toBe(true);
    // Kept for the next download from the host, as a measured number.
    expect(busy.measured).toBe(1);
    expect(busy.observe(1000 * MIB)).toBe('hold');
  });

  it('steps up from one, each step measured, after a look that found the thread busy short of that', () => {
    // Busy 70 % of the time: more could carry 1.4x at most, if the other end can send it.
    const busy = new ConnectionController({ max: 32, initial: 8 });
    expect(busy.observeBusy(0.7)).toBe('step');
    expect(busy.connections).toBe(1);
    expect(busy.settled).toBe(false);
    // A server that one connection keeps busy: a second gains nothing, and it goes back to one for good.
    expect(settle(busy, () => 900 * MIB)).toEqual([1, 2]);
    expect(busy.connections).toBe(1);
    expect(busy.measured).toBe(1);
    // Where the other end keeps up, the steps go on while they pay.
    const capped = new ConnectionController({ max: 32, initial: 8 });
    expect(capped.observeBusy(0.5)).toBe('step');
    expect(settle(capped, (n) => Math.min(n, 2) * 200 * MIB)).toEqual([1, 2, 8]);
    expect(capped.connections).toBe(2);
  });

  it('opens the first step after a look at one connection that left the thread mostly idle', () => {
    const idle = new ConnectionController({ max: 32, initial: 8 });
    expect(idle.observeBusy(0.05)).toBe('open');
    expect(idle.connections).toBe(8);
    expect(idle.settled).toBe(false);
    expect(idle.measured).toBeUndefined();
    expect(settle(idle, (n) => n * 40 * MIB)).toEqual([8, 16, 32]);
  });

  it('tries a second connection on a link one connection fills, and goes back to one for good', () => {
    const controller = new ConnectionController({ max: 32 });
    expect(settle(controller, () => 100 * MIB)).toEqual([1, 2]);
    expect(controller.connections).toBe(1);
    expect(controller.settled).toBe(true);
    expect(controller.observe(1000 * MIB)).toBe('hold');
    expect(controller.connections).toBe(1);
  });

  it('grows to the limit while a per-connection cap makes each step pay, by four after a near-full gain', () => {
    const controller = new ConnectionController({ max: 32 });
    expect(settle(controller, (n) => n * 40 * MIB)).toEqual([1, 2, 8, 32]);
    expect(controller.connections).toBe(32);
    expect(controller.settled).toBe(true);
  });

  it('doubles when each step pays but less than in proportion', () => {
    const controller = new ConnectionController({ max: 32 });
    expect(settle(controller, (n) => n ** 0.7 * 40 * MIB)).toEqual([1, 2, 4, 8, 16, 32]);
    expect(controller.connections).toBe(32);
    expect(controller.settled).toBe(true);
  });

  it('stops at the step before the one that stopped paying (a link of 8 or of 5 capped connections)', () => {
    const eight = new ConnectionController({ max: 32 });
    settle(eight, (n) => Math.min(n, 8) * 40 * MIB);
    expect(eight.connections).toBe(8);
    // 2 to 8 still gains 2.5x, 8 to 32 nothing: it keeps 8, never fewer than the link needs.
    const five = new ConnectionController({ max: 32 });
    settle(five, (n) => Math.min(n, 5) * 40 * MIB);
    expect(five.connections).toBe(8);
  });

  it('settles between after a step by four that gained only what a doubling must', () => {
    // 2 to 8 gains 1.5x: not the 1.9x four times as many must, enough for twice as many.
    const controller = new ConnectionController({ max: 32 });
    expect(settle(controller, (n) => ({ 1: 40, 2: 80, 8: 120 })[n] ?? 0)).toEqual([1, 2, 8]);
    expect(controller.connections).toBe(4);
  });

  it('keeps a step that pays a little less than double, drops one whose gain is noise', () => {
    const gains = new ConnectionController({ max: 32 });
    // 1.5x for 2, then only 1.1x for 4.
    settle(gains, (n) => ({ 1: 100, 2: 150, 4: 165 })[n] ?? 0);
    expect(gains.connections).toBe(2);
    const noise = new ConnectionController({ max: 32 });
    settle(noise, (n) => (n === 1 ? 100 : 125));
    expect(noise.connections).toBe(1);
  });

  it('falls back when a step loses throughput, and counts a zero reading as no gain', () => {
    const loses = new ConnectionController({ max: 32 });
    settle(loses, (n) => (n <= 8 ? n * 10 : 5));
    expect(loses.connections).toBe(8);
    const zero = new ConnectionController({ max: 32 });
    settle(zero, (n) => (n === 1 ? 10 : 0));
    expect(zero.connections).toBe(1);
  });

  it('never goes above its limit, which need not be a power of two', () => {
    const controller = new ConnectionController({ max: 12 });
    expect(settle(controller, (n) => n * MIB)).toEqual([1, 2, 8, 12]);
    const one = new ConnectionController({ max: 1 });
    expect(one.settled).toBe(true);
    expect(one.observe(1)).toBe('hold');
    expect(one.connections).toBe(1);
  });

  it('starts from the initial number: on a full link it keeps it, on a capped one it grows from there', () => {
    const full = new ConnectionController({ max: 32, initial: 8 });
    expect(settle(full, () => 260 * MIB)).toEqual([8, 16]);
    expect(full.connections).toBe(8);
    expect(full.settled).toBe(true);
    const capped = new ConnectionController({ max: 32, initial: 8 });
    expect(settle(capped, (n) => n * 10 * MIB)).toEqual([8, 16, 32]);
    expect(capped.connections).toBe(32);
    // Never above the limit, and a start at the limit holds from the first step.
    const atLimit = new ConnectionController({ max: 4, initial: 8 });
    expect(atLimit.connections).toBe(4);
    expect(atLimit.settled).toBe(true);
  });

  it('holds once told to settle', () => {
    const controller = new ConnectionController();
    expect(controller.observe(10)).toBe('grow');
    controller.settle();
    expect(controller.observe(1000)).toBe('hold');
    expect(controller.connections).toBe(2);
  });
});

describe('what a ConnectionController measured', () => {
  it('is nothing before a step was compared, and nothing when it was only told to settle', () => {
    const controller = new ConnectionController({ max: 32, initial: 8 });
    expect(controller.measured).toBeUndefined();
    controller.observe(100 * MIB);
    expect(controller.measured).toBeUndefined();
    controller.settle();
    expect(controller.measured).toBeUndefined();
    expect(new ConnectionController({ max: 8, initial: 8 }).measured).toBeUndefined();
  });

  it('is the number it settled on, or while it still grows the most connections a step showed to pay', () => {
    const full = new ConnectionController({ max: 32, initial: 8 });
    settle(full, () => 100 * MIB);
    expect(full.measured).toBe(8);
    const capped = new ConnectionController({ max: 32, initial: 8 });
    capped.observe(8 * 40 * MIB);
    expect(capped.connections).toBe(16);
    capped.observe(16 * 40 * MIB);
    // 16 paid; 32 is being tried and not measured yet.
    expect(capped.connections).toBe(32);
    expect(capped.measured).toBe(16);
    capped.observe(32 * 40 * MIB);
    expect(capped.settled).toBe(true);
    expect(capped.measured).toBe(32);
  });
});

describe('ThroughputWindow', () => {
  it('reads bytes a second once the window is long enough, and closes', () => {
    const window = new ThroughputWindow(300);
    expect(window.read(0, 0)).toBeUndefined();
    window.start(1000, 5 * MIB);
    expect(window.open).toBe(true);
    expect(window.read(1200, 6 * MIB)).toBeUndefined();
    expect(window.read(1500, 7 * MIB)).toBe(4 * MIB);
    expect(window.open).toBe(false);
    expect(window.read(2000, 9 * MIB)).toBeUndefined();
  });
});
