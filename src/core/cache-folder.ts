/**
 * The platform's cache folder, apart from the configuration module: the bin asks for it before a command loads
 * that module (see `src/cli/compile-cache.ts`).
 */
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';

/**
 * The platform's cache folder for mission-data (`~/.cache/mission-data` on Linux, `~/Library/Caches/mission-data`
 * on macOS, `%LOCALAPPDATA%\mission-data\Cache` on Windows): what it keeps can be made again. XDG_CACHE_HOME, when
 * set, is honoured on every system, as XDG_CONFIG_HOME is for the configuration.
 */
export function defaultCacheFolder(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg) return join(resolve(xdg), 'mission-data');
  return envPaths('mission-data', { suffix: '' }).cache;
}
