/** The package's version, as `--version` prints it and the compile cache names its build folder. */
import { readFileSync } from 'node:fs';

/**
 * The package's version, from its package.json: one folder up from the bundle (`dist/mission-data.js`), two
 * from this module's own place (`src/cli/`, `dist/cli/`, where tests import it).
 */
export function packageVersion(): string {
  known ??= readVersion();
  return known;
}

let known: string | undefined;

function readVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    let text: string;
    try {
      text = readFileSync(new URL(path, import.meta.url), 'utf8');
    } catch {
      continue;
    }
    const found = JSON.parse(text) as { name?: string; version?: string };
    if (found.name === 'mission-data' && typeof found.version === 'string') return found.version;
  }
  return 'unknown';
}
