/**
 * On Node 22.1 and later the bin keeps the code compiled for a command's modules in the user's cache folder
 * (src/cli/compile-cache.ts). Run under such a Node: this one when it is one, else the one `.ci/run` fetches
 * from npm (MISSION_DATA_NODE_WITH_CACHE). A download fills the cache, the next one reads it and gives the same
 * result, and `NODE_DISABLE_COMPILE_CACHE=1` keeps every byte of it away.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  type CliRun,
  cleanup,
  listFiles,
  putFile,
  runCli,
  scienceName,
  startServer,
  type TestServer,
  tempDir,
} from '../helpers/e2e.js';

/** A Node that has the compile cache: 22.1 or later. */
function withCache(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
}

const NODE = withCache(process.version) ? process.execPath : process.env.MISSION_DATA_NODE_WITH_CACHE;

const NAME = scienceName('mag', 1);
const BYTES = Buffer.from('kept compiled code, same bytes\n');

let server: TestServer;
let home: string;
let store: string;

beforeAll(async () => {
  assertBuilt();
  home = await tempDir('mission-compile-cache-');
  store = await tempDir('mission-compile-cache-store-');
  await putFile(store, NAME, BYTES);
  server = await startServer({ storeDir: store });
});
afterAll(async () => {
  await server?.stop();
  await cleanup(home);
  await cleanup(store);
});

/** The files below `folder` (relative paths), each with the time it was last written. */
async function writtenBelow(folder: string): Promise<Map<string, number>> {
  const files = await listFiles(folder, { state: true });
  return new Map(files.map((file) => [file, statSync(join(folder, file)).mtimeMs]));
}

function download(
  node: string,
  path: string,
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<CliRun> {
  return runCli(['download', path, '--url', server.url, '--data-dir', dataDir, '-q'], {
    cwd: home,
    node,
    env: { XDG_CACHE_HOME: join(home, 'cache'), ...extra },
    timeoutMs: 30_000,
  });
}

describe.skipIf(NODE === undefined)('the compile cache, on Node 22.1 and later', () => {
  it('keeps the code of a download’s modules for the next start, which gives the same result', async () => {
    const node = NODE as string;
    const path = NAME;
    const builds = join(home, 'cache', 'mission-data', 'compiled-code');

    const off = await download(node, path, join(home, 'off'), { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(await listFiles(join(home, 'cache'), { state: true })).toEqual([]);

    const first = await download(node, path, join(home, 'first'));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const written = await writtenBelow(builds);
    // The command's own modules (the service client, the download engine) are among those kept.
    expect(written.size).toBeGreaterThan(5);

    const second = await download(node, path, join(home, 'second'));
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout.replace('second', 'first')).toBe(first.stdout);
    const [landed] = second.stdout.trim().split('\n');
    expect(readFileSync(landed as string)).toEqual(BYTES);
    // Read, not made again: the same files, none rewritten.
    expect(await writtenBelow(builds)).toEqual(written);
  });
});
