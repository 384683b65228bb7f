import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, type ServeProcess, spawnServe, tempDir } from '../helpers/e2e.js';
import { unixOnly } from '../helpers/platform.js';

const LINKS = unixOnly('a symlinked node_modules and a bin without .cmd');

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** What a default install of the package may take, with a margin: it holds 3 MB and no dependency today. */
const MAX_INSTALLED_BYTES = 12 * 1024 * 1024;
const MAX_INSTALLED_PACKAGES = 10;
let folder: string;
let served: ServeProcess | undefined;

beforeAll(async () => {
  folder = await tempDir('mission-pack-');
});
afterAll(async () => {
  served?.child.kill();
  await served?.exit;
  await rm(folder, { recursive: true, force: true });
});

/**
 * A fresh clone of the repository as it stands (its files, committed or not, without dist/), sharing the
 * repository's node_modules: packing it runs the package's own scripts, and builds nothing in the repository.
 */
async function freshClone(): Promise<string> {
  const clone = join(folder, 'clone');
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    await cp(join(root, file), join(clone, file)).catch((error: NodeJS.ErrnoException) => {
      // A file deleted in the working tree but not yet in the index.
      if (error.code !== 'ENOENT') throw error;
    });
  }
  await symlink(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

describe.skipIf(LINKS.missing)(LINKS.title('the package as shipped'), () => {
  it('packs from a fresh clone (built by prepack), installs alone and serves, queries and downloads', async () => {
    const clone = await freshClone();
    // With its scripts: `prepack` builds dist/, which a fresh clone does not have.
    const { stdout } = await exec(npm, ['pack', '--json', '--pack-destination', folder], {
      cwd: clone,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 180_000,
    });
    // npm prints the JSON last, after what the scripts print.
    const [packed] = JSON.parse(stdout.slice(stdout.lastIndexOf('\n[\n') + 1)) as [
      { filename: string; files: { path: string }[] },
    ];
    const files = packed.files.map((file) => file.path);
    expect(files).toContain('bin/mission-data.js');
    expect(files).toContain('dist/mission-data.js');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/server/index.js');
    expect(files).toContain('dist/server/index.d.ts');
    for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'])
      expect(files).toContain(file);
    expect(files.some((file) => file.startsWith('src/') || file.startsWith('test/'))).toBe(false);
    // Only what runs: the bin and the library entries are bundles, so no module of tsc's output is shipped
    // beside them (its declarations are); source maps would point at sources that are not shipped.
    const bundles = ['dist/mission-data.js', 'dist/index.js', 'dist/server/index.js'];
    expect(
      files.filter(
        (file) =>
          file.startsWith('dist/') &&
          !file.endsWith('.d.ts') &&
          !bundles.includes(file) &&
          !/^dist\/chunks\/[^/]+\.js$/.test(file),
      ),
    ).toEqual([]);
    expect(files.filter((file) => file.startsWith('dist/cli/') || file.endsWith('.map'))).toEqual([]);
    // ...and nothing that runs is missing: every relative import of every shipped module is shipped too,
    // and no module imports a package (the package depends on nothing at run time).
    const manifest = JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')) as {
      version: string;
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
      scripts: Record<string, string>;
    };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    for (const peer of Object.keys(manifest.peerDependencies ?? {}))
      expect(manifest.peerDependenciesMeta?.[peer]?.optional, `peer ${peer}`).toBe(true);
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(manifest.scripts[script], script).toBeUndefined();
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const code = (await readFile(join(clone, file), 'utf8'))
        .split('\n')
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
        .join('\n');
      // Static imports as esbuild and tsc write them (at the start of a line), and dynamic ones.
      const imports =
        /^(?:import|export|\})[^'"\n]*?(?:from\s*)?['"]([^'"]+)['"];?$|\bimport\(['"]([^'"]+)['"]\)/gm;
      for (const [, fromStatic, fromDynamic] of code.matchAll(imports)) {
        const specifier = fromStatic ?? fromDynamic;
        if (specifier?.startsWith('node:')) continue;
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.{1,2}\//);
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
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    );
    expect(
      (JSON.parse(attw.stdout) as { analysis: { problems: unknown[] } }).analysis.problems.filter(
        (problem) =>
          (problem as { resolutionKind?: string }).resolutionKind !== 'node16-cjs' &&
          (problem as { resolutionKind?: string }).resolutionKind !== 'node10',
      ),
    ).toEqual([]);

    // Installed alone, as `npm install mission-data` would: no registry needed, no script run.
    const prefix = join(folder, 'prefix');
    await mkdir(prefix);
    const install = await exec(
      npm,
      ['install', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      { cwd: folder, timeout: 180_000 },
    );
    expect(`${install.stdout}${install.stderr}`).not.toContain('install-scripts');
    const lock = JSON.parse(await readFile(join(prefix, 'node_modules/.package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const packages = Object.keys(lock.packages);
    expect(packages).toContain('node_modules/mission-data');
    expect(packages.length).toBeLessThanOrEqual(MAX_INSTALLED_PACKAGES);
    const du = await exec('du', ['-sk', prefix]);
    const installedBytes = Number.parseInt(du.stdout, 10) * 1024;
    expect(installedBytes).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);

    const bin = join(prefix, 'node_modules/.bin/mission-data');
    const cli = await exec(bin, ['--version'], { cwd: prefix });
    expect(cli.stdout.trim()).toBe(manifest.version);
    const help = await exec(bin, ['--help'], { cwd: prefix });
    expect(help.stdout).toContain('Usage: mission-data');
    const configHelp = await exec(bin, ['config', '--help'], { cwd: prefix });
    expect(configHelp.stdout).toContain('Usage: mission-data config');
    const completion = await exec(bin, ['completion', 'bash'], { cwd: prefix });
    expect(completion.stdout).toContain('complete -F _mission_data mission-data');

    const names = await exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const lib = await import('mission-data'); const server = await import('mission-data/server'); console.log(JSON.stringify([typeof lib.parseName, typeof lib.createClient, typeof server.startReferenceServer]))",
      ],
      { cwd: prefix },
    );
    expect(JSON.parse(names.stdout)).toEqual(['function', 'function', 'function']);
    // Every exported error class keeps its name through the bundle: `err.name` and `String(err)`.
    const errors = await exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        [
          "const lib = await import('mission-data');",
          "const server = await import('mission-data/server');",
          'const seen = {};',
          'for (const entry of [lib, server])',
          '  for (const [name, value] of Object.entries(entry)) {',
          '    if (typeof value !== "function" || !(value.prototype instanceof Error)) continue;',
          '    let error;',
          "    try { error = new value('m'); } catch { error = new value(['m']); }",
          '    seen[name] = [error.name, String(error).split(":")[0]];',
          '  }',
          'console.log(JSON.stringify(seen));',
        ].join('\n'),
      ],
      { cwd: prefix },
    );
    const classes = JSON.parse(errors.stdout) as Record<string, [string, string]>;
    expect(Object.keys(classes)).toEqual(expect.arrayContaining(['AbortedError', 'ApiError', 'StoreError']));
    for (const [name, named] of Object.entries(classes)) expect(named, name).toEqual([name, name]);
    // require() of the package where Node loads ES modules that way (20.19+, 22.12+).
    if ((process.features as { require_module?: boolean }).require_module === true) {
      const required = await exec(
        process.execPath,
        [
          '-e',
          "const lib = require('mission-data'); const server = require('mission-data/server'); console.log(JSON.stringify([typeof lib.parseName, typeof lib.createClient, typeof server.startReferenceServer]))",
        ],
        { cwd: prefix },
      );
      expect(JSON.parse(required.stdout)).toEqual(['function', 'function', 'function']);
    }

    // The installed bin serves the demo archive; the installed bin queries and downloads from it.
    const work = join(folder, 'work');
    await mkdir(work);
    served = await spawnServe(['--port', '0', '--store', join(folder, 'store'), '--demo'], {
      cwd: work,
      env: cleanEnv(work),
      bin,
    });
    const env = { MISSION_DATA_ACCESS_URL: served.url };
    const query = await runCli(['query', '--instrument', 'swe', '--output-format', 'json'], {
      cwd: work,
      env,
      bin,
    });
    expect(query.stderr).toBe('');
    expect(query.code).toBe(0);
    const records = JSON.parse(query.stdout) as { file_path: string }[];
    expect(records.length).toBeGreaterThan(0);
    const download = await runCli(['download', '--instrument', 'swe'], { cwd: work, env, bin });
    expect(download.code).toBe(0);
    for (const record of records) {
      await expect(readFile(join(work, 'data', record.file_path))).resolves.toBeInstanceOf(Buffer);
    }
  }, 300_000);
});
