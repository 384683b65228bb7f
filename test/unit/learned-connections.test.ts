/** What `--connections auto` keeps per host in the data root, and what it does with a record it cannot trust. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CONNECTIONS_FILE,
  FORGET_AFTER_MS,
  LearnedConnections,
} from '../../src/data-root/learned-connections.js';
import { DEFAULT_CONNECTIONS, DEFAULT_MAX_CONNECTIONS } from '../../src/download/ranged/adaptive.js';
import { unixOnly } from '../helpers/platform.js';
import { makeTempDir } from '../server/helpers.js';

const MODES = unixOnly('file modes');

const LIMITS = { start: DEFAULT_CONNECTIONS, max: DEFAULT_MAX_CONNECTIONS };
let root: string;
let file: string;
beforeEach(async () => {
  root = await makeTempDir('mission-learned-');
  mkdirSync(join(root, '.mission-data'));
  file = join(root, '.mission-data', CONNECTIONS_FILE);
});
afterEach(async () => {
  await chmod(join(root, '.mission-data'), 0o755).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

describe('LearnedConnections', () => {
  it('starts from the fixed default for a host it knows nothing of, and from what it learned next time', () => {
    const first = LearnedConnections.read(root, LIMITS);
    expect(first.startFor('store.example:443')).toBe(DEFAULT_CONNECTIONS);
    // Nothing measured there yet: a download looks at its first connection before it opens the default.
    expect(first.measuredAt('store.example:443')).toBeUndefined();
    first.learn('store.example:443', 32);
    first.save();
    const next = LearnedConnections.read(root, LIMITS);
    expect(next.startFor('store.example:443')).toBe(32);
    expect(next.measuredAt('store.example:443')).toBe(32);
    expect(next.startFor('other.example:443')).toBe(DEFAULT_CONNECTIONS);
    expect(next.measuredAt('other.example:443')).toBeUndefined();
    expect(JSON.parse(readFileSync(file, 'utf8')).hosts['store.example:443'].connections).toBe(32);
  });

  it('writes nothing when nothing was learned', () => {
    LearnedConnections.read(root, LIMITS).save();
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });

  it('forgets a number measured too long ago, and ignores numbers out of range or a record it cannot read', () => {
    const now = Date.parse('2026-11-26T00:00:00Z');
    const old = new Date(now - FORGET_AFTER_MS - 1).toISOString();
    const recent = new Date(now - 1_000).toISOString();
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        hosts: {
          old: { connections: 16, measuredAt: old },
          recent: { connections: 16, measuredAt: recent },
          zero: { connections: 0, measuredAt: recent },
          many: { connections: 1000, measuredAt: recent },
          half: { connections: 2.5, measuredAt: recent },
          undated: { connections: 4 },
        },
      }),
    );
    const learned = LearnedConnections.read(root, LIMITS, now);
    expect(learned.startFor('recent')).toBe(16);
    for (const host of ['old', 'zero', 'many', 'half', 'undated']) {
      expect(learned.startFor(host)).toBe(DEFAULT_CONNECTIONS);
    }
    for (const text of ['not json', 'null', '[]', '{"hosts": 3}']) {
      writeFileSync(file, text);
      expect(LearnedConnections.read(root, LIMITS, now).startFor('recent')).toBe(DEFAULT_CONNECTIONS);
    }
  });

  it.skipIf(MODES.missing)(MODES.title('fails no download when its record cannot be written'), async () => {
    await chmod(join(root, '.mission-data'), 0o500);
    const learned = LearnedConnections.read(root, LIMITS);
    learned.learn('store.example:443', 16);
    expect(() => learned.save()).not.toThrow();
    await rm(join(root, '.mission-data'), { recursive: true, force: true }).catch(() => undefined);
    const missing = LearnedConnections.read(root, LIMITS);
    missing.learn('store.example:443', 16);
    expect(() => missing.save()).not.toThrow();
  });
});
