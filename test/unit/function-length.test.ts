import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** `scripts/long-functions.js` run on src/ with a limit. */
function longFunctions(limit: number): { status: number | null; lines: string[] } {
  const run = spawnSync(process.execPath, ['scripts/long-functions.js', String(limit)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, lines: run.stdout.trim().split('\n') };
}

describe('the length of functions (scripts/long-functions.js)', () => {
  it('holds every function of src/ to 60 lines: a longer one is named with its file', () => {
    const { status, lines } = longFunctions(60);
    expect(lines).toEqual(['0 functions over 60 lines in src/']);
    expect(status).toBe(0);
  });

  it('names the functions over a lower limit, longest first, and fails', () => {
    const { status, lines } = longFunctions(40);
    expect(status).toBe(1);
    const counted = lines.slice(0, -1).map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(counted.length).toBeGreaterThan(0);
    expect(counted.every((lines) => lines > 40)).toBe(true);
    expect(counted).toEqual([...counted].sort((a, b) => b - a));
    expect(lines.at(-1)).toBe(`${counted.length} functions over 40 lines in src/`);
  });
});
