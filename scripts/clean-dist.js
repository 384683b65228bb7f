/**
 * Removes from dist/ what no source produces any more: tsc never deletes the output of a source file since
 * moved or removed, and `npm pack` would ship it. Only leftovers go, never the whole folder, so a build
 * running beside another (or beside tests that run dist/) never finds it missing. Source maps are not built
 * (they would point at sources the package does not ship), so any found are leftovers too.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

if (existsSync('dist')) {
  for (const entry of readdirSync('dist', { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const inDist = relative('dist', path);
    // The bundle and its chunks come from scripts/bundle.js, which clears its own chunks.
    if (inDist === 'mission-data.js' || inDist.startsWith('chunks')) continue;
    const stem = inDist.replace(/(\.d\.ts|\.js)$/, '');
    if (inDist.endsWith('.map') || !existsSync(join('src', `${stem}.ts`))) rmSync(path);
  }
}
