/**
 * The compile cache the bin turns on (src/cli/compile-cache.ts): where it goes, when it stays off, and how the
 * folders of other builds are removed. Node's API is stood in for here (Node 20 has none); the cache itself,
 * on a Node that has it, is exercised in test/e2e/compile-cache.test.ts.
 */
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CompileCacheApi, cacheCompiledCode } from '../../src/cli/compile-cache.js';
import { defaultCacheFolder } from '../../src/core/cache-folder.js';

const STATUS = { FAILED: 0, ENABLED: 1, ALREADY_ENABLED: 2, DISABLED: 3 };

/** Node 22's API as far as the bin uses it, answering `status` and noting the folders it was handed. */
function nodeApi(status = STATUS.ENABLED, placed?: string): CompileCacheApi & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    enableCompileCache: (directory) => {
      asked.push(directory);
      if (status === STATUS.ENABLED) mkdirSync(directory, { recursive: true });
      return { status };
    },
    getCompileCacheDir: () => placed,
    constants: { compileCacheStatus: { ENABLED: STATUS.ENABLED } },
  };
}

let cache: string;
let env: Record<string, string>;
let builds: string;

beforeEach(async () => {
  cache = await mkdtemp(join(tmpdir(), 'mission-compile-cache-'));
  env = { XDG_CACHE_HOME: cache };
  builds = join(cache, 'mission-data', 'compiled-code');
});
afterEach(async () => {
  await rm(cache, { recursive: true, force: true });
});

/** Makes the folder of another build, last written `daysAgo` days ago. */
function otherBuild(name: string, daysAgo: number): void {
  const folder = join(builds, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'code'), 'x');
  const when = new Date(Date.now() - daysAgo * 86_400_000);
  utimesSync(folder, when, when);
}

describe('cacheCompiledCode', () => {
  it('turns the cache on in the build’s folder below the platform’s cache folder', () => {
    const api = nodeApi();
    const folder = cacheCompiledCode({ api, env, build: '1.2.0-abc' });
    expect(folder).toBe(join(builds, '1.2.0-abc'));
    expect(api.asked).toEqual([folder]);
    expect(defaultCacheFolder(env)).toBe(join(cache, 'mission-data'));
  });

  it('does nothing on a Node without the cache (Node 20)', () => {
    expect(cacheCompiledCode({ api: {}, env, build: '1.2.0-abc' })).toBeUndefined();
    expect(readdirSync(cache)).toEqual([]);
  });

  it('leaves a cache the user placed (NODE_COMPILE_CACHE) as it is', () => {
    const api = nodeApi(STATUS.ENABLED, '/elsewhere');
    expect(cacheCompiledCode({ api, env, build: '1.2.0-abc' })).toBeUndefined();
    expect(api.asked).toEqual([]);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('removes nothing when Node keeps the cache off (NODE_DISABLE_COMPILE_CACHE, a folder it cannot make)', () => {
    otherBuild('1.0.0-a', 30);
    otherBuild('1.0.1-b', 20);
    otherBuild('1.1.0-c', 10);
    for (const status of [STATUS.DISABLED, STATUS.FAILED]) {
      expect(cacheCompiledCode({ api: nodeApi(status), env, build: '1.2.0-abc' })).toBeUndefined();
    }
    expect(readdirSync(builds).sort()).toEqual(['1.0.0-a', '1.0.1-b', '1.1.0-c']);
  });

  it('at a build’s first start, removes the other builds’ folders but the two made last', () => {
    otherBuild('1.0.0-a', 30);
    otherBuild('1.1.0-c', 1);
    otherBuild('1.0.1-b', 20);
    otherBuild('0.9.0-z', 40);
    writeFileSync(join(builds, 'not-a-build'), 'kept: only folders are removed');
    cacheCompiledCode({ api: nodeApi(), env, build: '1.2.0-abc' });
    expect(readdirSync(builds).sort()).toEqual(['1.0.1-b', '1.1.0-c', '1.2.0-abc', 'not-a-build']);
  });

  it('removes nothing at a later start of the same build', () => {
    mkdirSync(join(builds, '1.2.0-abc'), { recursive: true });
    otherBuild('1.0.0-a', 30);
    otherBuild('1.0.1-b', 20);
    otherBuild('1.1.0-c', 10);
    expect(cacheCompiledCode({ api: nodeApi(), env, build: '1.2.0-abc' })).toBe(join(builds, '1.2.0-abc'));
    expect(readdirSync(builds)).toHaveLength(4);
  });

  it('never throws: a cache Node cannot turn on leaves the command as it was', () => {
    const api: CompileCacheApi = {
      enableCompileCache: () => {
        throw new Error('no room');
      },
      constants: { compileCacheStatus: { ENABLED: STATUS.ENABLED } },
    };
    expect(cacheCompiledCode({ api, env, build: '1.2.0-abc' })).toBeUndefined();
  });

  it('names a build by its version and its bundle’s time when none is given', () => {
    const folder = cacheCompiledCode({ api: nodeApi(), env });
    expect(folder).toMatch(/compiled-code[/\\]\d+\.\d+\.\d+[\w.+-]*-[0-9a-z]+$/);
  });
});
