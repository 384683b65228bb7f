/**
 * The README's command examples run as written against the demo archive (`serve --demo`): every `mission-data`
 * line of its shell blocks, in order, in one folder, through a `mission-data` on PATH that is the built bin.
 * Only the lines that install, start the server or point at it are left to the test's own set-up.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoArchive } from '../../src/server/index.js';
import { assertBuilt, BIN, cleanup, ROOT, startServer, type TestServer, tempDir } from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';

const BASH = unixOnly('bash');

const exec = promisify(execFile);

/** The `mission-data` lines of the README's shell blocks, but those the set-up stands for. */
async function readmeExamples(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
  return blocks
    .flatMap((block) => block.split('\n'))
    .filter((line) => /(^|\s)mission-data /.test(line))
    .filter((line) => !/^(npm |export )|mission-data serve /.test(line));
}

let server: TestServer;
let store: string;
let home: string;

beforeAll(async () => {
  assertBuilt();
  store = await tempDir('mission-store-');
  await writeDemoArchive(store);
  server = await startServer({ storeDir: store });
  home = await tempDir('mission-readme-');
  await mkdir(join(home, 'bin'));
  // Any system: a file like any other until bash runs it, which only the test skipped on Windows does.
  await writeFile(join(home, 'bin', 'mission-data'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  // Any system: Windows keeps no mode, and no error comes of setting one.
  await chmod(join(home, 'bin', 'mission-data'), 0o755);
});
afterAll(async () => {
  await server?.stop();
  await cleanup(store);
  await cleanup(home);
});

describe.skipIf(BASH.missing)(BASH.title('the README examples on the demo archive'), () => {
  it('each one exits 0, and each query finds files', async () => {
    const examples = await readmeExamples();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    const work = join(home, 'work');
    await mkdir(work);
    for (const example of examples) {
      // The one placeholder of the examples: the folder that holds the data root.
      const line = example.replace('/path/containing/data', '.');
      const run = await exec('bash', ['-o', 'pipefail', '-c', line], {
        cwd: work,
        env: {
          PATH: `${join(home, 'bin')}:${process.env.PATH ?? ''}`,
          HOME: home,
          XDG_CONFIG_HOME: join(home, 'config'),
          MISSION_DATA_ACCESS_URL: server.url,
        },
      }).catch((error: { code?: number; stderr?: string }) => {
        throw new Error(`README example failed (exit ${error.code}): ${example}\n${error.stderr}`);
      });
      if (/mission-data query [^|]*$/.test(line)) expect(run.stdout, example).toMatch(/imap_/);
    }
    // The quick start's download lands where its comment says.
    expect(existsSync(join(work, 'data', 'imap', 'mag', 'l1a', '2025', '01'))).toBe(true);
  });
});
