/**
 * Two forms that must not change with how they are built: a file's `dayKey` is its `productKey` and `dayOf`
 * joined by `|` (the comparisons of status, coverage and sync match files of either side by it), and a sync
 * state's text, written in pieces, is `JSON.stringify` of the state and a newline, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { dayKey, dayOf, productKey } from '../../src/coverage/products.js';
import { emptyState, type SyncState, stateText } from '../../src/data-root/sync-state.js';
import { parseName } from '../../src/naming/names.js';

describe('dayKey', () => {
  it.each([
    'imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
    'imap_mag_l1a_burst_20210101_v001.0001.cdf',
    'imap_mag_l0_raw_20210101-repoint00001_v000.0001.pkts',
    'imap_glows_l3a_test_20210101-cr00023_v000.0001.cdf',
    'imap_mag_l1a_test_20210101-repoint00001_v001.0001.png',
    'imap_mag_calibration_20250101_v001.json',
    'imap_90days_20251020_20260220_v01.bsp',
    'imap_2025_122_2025_122_01.spin.csv',
  ])('of %s is its product and day joined by |', (name) => {
    const file = parseName(name);
    expect(dayKey(file)).toBe(`${productKey(file)}|${dayOf(file)}`);
  });
});

describe('stateText', () => {
  const identity = { url: 'http://api.test', filters: { instrument: 'mag' }, allVersions: false };

  function stateHolding(count: number): SyncState {
    const state = emptyState(identity);
    for (let i = 0; i < count; i += 1) {
      state.held[`imap/mag/l1a/2025/01/imap_mag_l1a_norm_2025010${i % 10}_v${i}.cdf`] =
        i % 3 === 0 ? null : `2025-01-0${(i % 9) + 1} 00:00:00`;
    }
    return { ...state, cursor: '2025-01-09 00:00:00', failed: ['a "quoted" path'], superseded: ['b\\c'] };
  }

  it.each([0, 1, 4095, 4096, 4097, 10_001])(
    'is JSON.stringify of a state holding %i files, and a newline',
    (count) => {
      const state = stateHolding(count);
      expect([...stateText(state)].join('')).toBe(`${JSON.stringify(state)}\n`);
    },
  );

  it('writes paths and filters that need escaping as JSON.stringify does', () => {
    const state = {
      ...emptyState({ ...identity, filters: { descriptor: '"held":{}' } }),
      held: { 'a"b\\c\u2028d': '2025-01-01 00:00:00', '"held":{}': null, '123': null },
    };
    expect([...stateText(state)].join('')).toBe(`${JSON.stringify(state)}\n`);
  });
});
