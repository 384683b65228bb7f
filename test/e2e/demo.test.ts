/**
 * The README's quick start runs `npm run demo`: the script must go through every step it shows (a step that
 * ends with another exit status than it announces makes it fail), against the built command line.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, finished, ROOT, tempDir } from '../helpers/e2e.js';

beforeAll(() => assertBuilt());

describe('npm run demo', () => {
  it('runs every step of the quick start and ends with "Demo complete."', async () => {
    const home = await tempDir('mission-demo-');
    const child = spawn(process.execPath, [join(ROOT, 'scripts/demo.js')], {
      cwd: ROOT,
      env: cleanEnv(home),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end();
    const run = await finished(child, 60_000);
    expect(run.stderr).not.toContain('Demo failed');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('already stored (same bytes)');
    expect(run.stdout).toContain('Demo complete.');
    // A clone has no `mission-data` on the PATH: the closing line names commands that run there.
    expect(run.stdout).toContain('Try it yourself: `node bin/mission-data.js serve --demo` in this folder');
    expect(run.stdout).toContain(`\`node ${join(ROOT, 'bin/mission-data.js')} …\``);
    expect(run.stdout).toContain('`npx mission-data …` in this folder');
  });
});
