import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
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
    // Without scripts: `prepare` (patch-package, for the test engines) would print into the JSON on stdout;
    // dist/ is built by `pretest` already.
    const { stdout } = await exec(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', folder], {
      cwd: root,
    });
    const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('bin/mission-data.js');
    expect(files).toContain('dist/mission-data.js');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/server/index.js');
    for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'])
      expect(files).toContain(file);
    expect(files.some((file) => file.startsWith('src/') || file.startsWith('test/'))).toBe(false);
    // Only what runs: the bin runs the bundle, so the unbundled command line is never loaded; source maps
    // would point at sources that are not shipped.
    expect(files.filter((file) => /^dist\/(cli\.|commands\/)/.test(file) || file.endsWith('.map'))).toEqual(
      [],
    );
    // ...and nothing that runs is missing: every relative import of every shipped module is shipped too
    // (comment lines are skipped: bundled code names its own type files in JSDoc).
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const code = (await readFile(join(root, file), 'utf8'))
        .split('\n')
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
        .join('\n');
      for (const [, specifier] of code.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const target = join(file, '..', specifier as string)
          .split('\\')
          .join('/');
        expect(files, `${file} imports ${specifier}`).toContain(target);
      }
    }

    // The package linters, on the tarball as published: publint, and the types as each resolver sees them
    // (ESM-only profile: CommonJS TypeScript sees an ES module it must import(), which is what it is).
    const tarball = join(folder, packed.filename);
    const lint = await publint({
      pack: { tarball: new Uint8Array(await readFile(tarball)).buffer },
      level: 'warning',
    });
    expect(lint.messages).toEqual([]);
    const attw = await exec(
      join(root, 'node_modules/.bin/attw'),
      [tarball, '--profile', 'esm-only', '--format', 'json'],
      {
        cwd: root,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(
      (JSON.parse(attw.stdout) as { analysis: { problems: unknown[] } }).analysis.problems.filter(
        (problem) =>
          (problem as { resolutionKind?: string }).resolutionKind !== 'node16-cjs' &&
          (problem as { resolutionKind?: string }).resolutionKind !== 'node10',
      ),
    ).toEqual([]);

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

    // require() of the package where Node loads ES modules that way (20.19+, 22.12+).
    const requireModule = (process.features as { require_module?: boolean }).require_module === true;
    if (requireModule) {
      const required = await exec(
        process.execPath,
        [
          '-e',
          "const lib = require('mission-data'); const server = require('mission-data/server'); console.log(JSON.stringify([typeof lib.parseName, typeof lib.createClient, typeof server.startReferenceServer]))",
        ],
        { cwd: project },
      );
      expect(JSON.parse(required.stdout)).toEqual(['function', 'function', 'function']);
    }

    const completion = await exec(join(project, 'node_modules/.bin/mission-data'), ['completion', 'bash'], {
      cwd: project,
    });
    expect(completion.stdout).toContain('complete -F _mission_data mission-data');
  }, 240_000);
});
