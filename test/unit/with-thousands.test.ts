/** `withThousands` writes a count as `toLocaleString('en-US')` does, without loading ICU's number formats. */
import { describe, expect, it } from 'vitest';
import { withThousands } from '../../src/core/text.js';

describe('withThousands', () => {
  it('writes whole numbers as en-US does, commas between the thousands', () => {
    for (const count of [0, 7, 999, 1000, 12_000, 100_056, 1_234_567, -1234, -999, 2 ** 53 - 1]) {
      expect(withThousands(count), String(count)).toBe(count.toLocaleString('en-US'));
    }
    expect(withThousands(12_000)).toBe('12,000');
  });

  it('leaves a number that is not a safe whole number to en-US', () => {
    for (const value of [1.5, 1234.25, 2 ** 60, Number.NaN]) {
      expect(withThousands(value)).toBe(value.toLocaleString('en-US'));
    }
  });
});
