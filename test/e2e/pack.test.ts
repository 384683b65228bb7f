import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'mission-pack-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the package as shipped', () => {
  it('packs, installs from the tarball and runs mission-data --version', async () => {
    const { stdout } = await exec(npm, ['pack', '--json', '--pack-destination', folder], { cwd: root });
    const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('bin/mission-data.js');
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/server/index.js');
    for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'])
      expect(files).toContain(file);
    expect(files.some((file) => file.startsWith('src/') || file.startsWith('test/'))).toBe(false);

    const project = join(folder, 'project');
    await exec('mkdir', ['-p', project]);
    await writeFile(join(project, 'package.json'), '{"name":"pack-check","private":true,"type":"module"}');
    await exec(
      npm,
      ['install', '--no-audit', '--no-fund', '--prefer-offline', join(folder, packed.filename)],
      {
        cwd: project,
        timeout: 180_000,
      },
    );
    const version = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string })
      .version;
    const cli = await exec(join(project, 'node_modules/.bin/mission-data'), ['--version'], { cwd: project });
    expect(cli.stdout.trim()).toBe(version);
    const help = await exec(join(project, 'node_modules/.bin/mission-data'), ['--help'], { cwd: project });
    expect(help.stdout).toContain('Usage: mission-data');
    const configHelp = await exec(join(project, 'node_modules/.bin/mission-data'), ['config', '--help'], {
      cwd: project,
    });
    expect(configHelp.stdout).toContain('Usage: mission-data config');

    const names = await exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const lib = await import('mission-data'); const server = await import('mission-data/server'); console.log(JSON.stringify([typeof lib.parseName, typeof lib.createClient, typeof server.startReferenceServer]))",
      ],
      { cwd: project },
    );
    expect(JSON.parse(names.stdout)).toEqual(['function', 'function', 'function']);
  }, 240_000);
});
