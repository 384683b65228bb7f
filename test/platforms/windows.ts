/**
 * Running the shipped command line under Windows Node.js in Wine: finding what `scripts/platforms/windows-node.sh`
 * prepared, translating paths to the drive Wine maps the Unix root to (Z:), and running a command with its
 * output in files (Windows Node under Wine writes nothing to a pipe: EBADF).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, type CliRun, ROOT } from '../helpers/e2e.js';

/** What the Windows suite runs with. */
export interface WineSetup {
  /** The Wine loader (Debian's wine64). */
  wine: string;
  wineserver: string;
  /** The Windows node.exe, as a Unix path. */
  node: string;
  /** The Wine prefix, set to Windows 10. */
  prefix: string;
}

/** The first of `paths` that exists. */
function firstExisting(paths: readonly (string | undefined)[]): string | undefined {
  return paths.find((path) => path !== undefined && path !== '' && existsSync(path));
}

/**
 * The Wine setup from the environment `.ci/run` passes (MISSION_DATA_WINDOWS_NODE, WINEPREFIX, MISSION_DATA_WINE,
 * MISSION_DATA_WINESERVER), else from the cache folder the setup script fills; or why it is not there.
 */
export function findWine(env: NodeJS.ProcessEnv = process.env): WineSetup | { missing: string } {
  const cache = env.MISSION_DATA_WINDOWS_CACHE ?? join(ROOT, '.cache/node-win');
  const wine = firstExisting([env.MISSION_DATA_WINE, '/usr/bin/wine64', '/usr/lib/wine/wine64']);
  const wineserver = firstExisting([
    env.MISSION_DATA_WINESERVER,
    '/usr/bin/wineserver',
    '/usr/lib/wine/wineserver',
  ]);
  const node = firstExisting([env.MISSION_DATA_WINDOWS_NODE, join(cache, 'package/bin/node.exe')]);
  const prefix = env.WINEPREFIX ?? join(cache, 'prefix');
  if (!wine || !wineserver) return { missing: 'Wine is not installed (apt-get install wine64)' };
  if (!node) return { missing: 'no Windows node.exe (run scripts/platforms/windows-node.sh)' };
  if (!existsSync(join(prefix, '.mission-data-win10')))
    return {
      missing: `no Wine prefix set to Windows 10 at ${prefix} (run scripts/platforms/windows-node.sh)`,
    };
  return { wine, wineserver, node, prefix };
}

/** A Unix path as Windows programs under Wine see it: on drive Z:, with backslashes. */
export function windowsPath(unixPath: string): string {
  return `Z:${unixPath.replaceAll('/', '\\')}`;
}

/** The environment of a Wine run: the prefix, no Wine debug output, and `extra`. */
export function wineEnv(setup: WineSetup, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    WINEPREFIX: setup.prefix,
    WINEDEBUG: '-all',
    WINEDLLOVERRIDES: 'mscoree,mshtml=;winemenubuilder.exe=d',
    ...extra,
  };
}

/** How one Windows run is made. */
export interface WineRunOptions {
  /** Working folder (Unix path; Windows sees it on Z:). */
  cwd: string;
  /** Where stdout and stderr go: `<outputs>.out` and `<outputs>.err`. */
  outputs: string;
  env?: Record<string, string>;
  /** SIGKILL after this long, so a hung run fails its test instead of holding it. */
  timeoutMs?: number;
}

/** Starts `node.exe bin/mission-data.js ...args` under Wine, its output going to files. */
export function spawnWindowsCli(
  setup: WineSetup,
  args: readonly string[],
  options: WineRunOptions,
): ChildProcess {
  const out = openSync(`${options.outputs}.out`, 'w');
  const err = openSync(`${options.outputs}.err`, 'w');
  try {
    return spawn(setup.wine, [setup.node, windowsPath(BIN), ...args], {
      cwd: options.cwd,
      env: wineEnv(setup, options.env),
      stdio: ['ignore', out, err],
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

/** Runs the shipped command line under Windows Node to its end (or `timeoutMs`), and reads its output files. */
export async function runWindowsCli(
  setup: WineSetup,
  args: readonly string[],
  options: WineRunOptions,
): Promise<CliRun> {
  const child = spawnWindowsCli(setup, args, options);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (done, fail) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
      child.on('error', (error) => {
        clearTimeout(timer);
        fail(error);
      });
      child.on('exit', (exitCode, exitSignal) => {
        clearTimeout(timer);
        done({ code: exitCode, signal: exitSignal });
      });
    },
  );
  const [stdout, stderr] = await Promise.all([
    readFile(`${options.outputs}.out`, 'utf8'),
    readFile(`${options.outputs}.err`, 'utf8'),
  ]);
  return { code, signal, stdout, stderr };
}

/**
 * Keeps the prefix's wineserver up until `stopWine`. By default it exits a few seconds after its last Windows
 * process, and a run that starts in that instant fails with "wine client error:0: recvmsg: Connection reset by
 * peer" (seen once in a full suite, on a loaded machine).
 */
export function keepWine(setup: WineSetup): void {
  spawnSync(setup.wineserver, ['-p'], { env: wineEnv(setup), stdio: 'ignore', timeout: 20_000 });
}

/** Ends every Windows process of the prefix (and its wineserver). */
export function stopWine(setup: WineSetup): void {
  spawnSync(setup.wineserver, ['-k'], { env: wineEnv(setup), stdio: 'ignore', timeout: 20_000 });
}
