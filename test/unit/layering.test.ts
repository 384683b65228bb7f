import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type ICruiseOptions } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const rules = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: NonNullable<NonNullable<ICruiseOptions['ruleSet']>['forbidden']>;
  options: ICruiseOptions & { tsConfig?: unknown };
};

/** The rule violations of the tree under `baseDir`/src, as `rule: from -> to`. */
async function violations(baseDir: string): Promise<string[]> {
  const { tsConfig: _tsConfig, ...options } = rules.options;
  const result = await cruise(['src'], {
    ...options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: rules.forbidden },
  });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser gave text, not a result');
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

const trees: string[] = [];
async function tree(files: Record<string, string>): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'layering-'));
  trees.push(base);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await writeFile(join(base, path), text);
  }
  return base;
}
afterAll(() => Promise.all(trees.map((t) => rm(t, { recursive: true, force: true }))));

describe('the layering rule (.dependency-cruiser.cjs, run by npm test)', () => {
  it('holds for src/', async () => {
    expect(await violations(ROOT)).toEqual([]);
  });

  it('fails an upward import and names both files', async () => {
    const base = await tree({
      'src/core/errors.ts': "import { program } from '../cli/program.js';\nexport const e = program;\n",
      'src/cli/program.ts': 'export const program = 1;\n',
    });
    expect(await violations(base)).toEqual(['core-imports-upward: src/core/errors.ts -> src/cli/program.ts']);
  });

  it('fails an import circle, a server import from the client and the client in the server', async () => {
    const base = await tree({
      'src/download/pump.ts': "import { r } from './receive.js';\nexport const p = r;\n",
      'src/download/receive.ts': "import { p } from './pump.js';\nexport const r = () => p;\n",
      'src/service/client.ts': "import { s } from '../server/index.js';\nexport const c = s;\n",
      'src/server/index.ts': "import { u } from '../upload/engine.js';\nexport const s = u;\n",
      'src/upload/engine.ts': 'export const u = 1;\n',
    });
    const found = await violations(base);
    expect(found).toContain('no-circular: src/download/pump.ts -> src/download/receive.ts');
    expect(found).toContain('server-only-through-serve: src/service/client.ts -> src/server/index.ts');
    expect(found).toContain('server-on-naming-and-core: src/server/index.ts -> src/upload/engine.ts');
  });

  it('lets the engines share only what lies below them', async () => {
    const base = await tree({
      'src/upload/engine.ts': "import { d } from '../download/pump.js';\nexport const u = d;\n",
      'src/download/pump.ts': 'export const d = 1;\n',
    });
    expect((await violations(base)).sort()).toEqual([
      'engines-stay-apart: src/upload/engine.ts -> src/download/pump.ts',
      'engines-through-their-entry: src/upload/engine.ts -> src/download/pump.ts',
    ]);
  });

  it('lets sync and the engines take one another only through the entry module and types.ts', async () => {
    const base = await tree({
      'src/sync/run.ts': [
        "import { d } from '../download/engine.js';",
        "import type { T } from '../download/types.js';",
        "import { c } from '../coverage/run.js';",
        "import { l } from '../coverage/local-copy.js';",
        "import { v } from '../download/object/receive.js';",
        "import { s } from './state.js';",
        'export const r: T = [d, c, l, v, s];',
        '',
      ].join('\n'),
      'src/sync/state.ts': 'export const s = 1;\n',
      'src/coverage/run.ts': "import { l } from './local-copy.js';\nexport const c = l;\n",
      'src/coverage/local-copy.ts': 'export const l = 1;\n',
      'src/coverage/status.ts': "import { p } from '../download/batch/plan.js';\nexport const t = p;\n",
      'src/download/engine.ts': "import { v } from './object/receive.js';\nexport const d = v;\n",
      'src/download/types.ts': 'export type T = unknown;\n',
      'src/download/object/receive.ts': 'export const v = 1;\n',
      'src/download/batch/plan.ts': 'export const p = 1;\n',
    });
    expect((await violations(base)).sort()).toEqual([
      'engines-through-their-entry: src/coverage/status.ts -> src/download/batch/plan.ts',
      'engines-through-their-entry: src/sync/run.ts -> src/coverage/local-copy.ts',
      'engines-through-their-entry: src/sync/run.ts -> src/download/object/receive.ts',
    ]);
  });

  it("keeps download's rooms one above another: batch/, object/, ranged/, part/, under engine.ts", async () => {
    const base = await tree({
      'src/download/engine.ts': 'export const e = 1;\n',
      'src/download/types.ts': 'export type T = unknown;\n',
      'src/download/batch/plan.ts': "import { o } from '../object/receive.js';\nexport const b = o;\n",
      'src/download/object/receive.ts': "import { r } from '../ranged/ranged.js';\nexport const o = r;\n",
      'src/download/ranged/ranged.ts': "import { e } from '../engine.js';\nexport const r = e;\n",
      'src/download/part/pump.ts': [
        "import type { T } from '../types.js';",
        "import { o } from '../object/receive.js';",
        'export const p: T = o;',
        '',
      ].join('\n'),
    });
    expect((await violations(base)).sort()).toEqual([
      'download-part-imports-upward: src/download/part/pump.ts -> src/download/object/receive.ts',
      'download-ranged-imports-upward: src/download/ranged/ranged.ts -> src/download/engine.ts',
    ]);
  });

  it("keeps each command body to its own files: another command's body or helper fails, its own helper passes", async () => {
    const base = await tree({
      'src/cli/commands/sync.ts': "import { r } from './download.js';\nexport const s = r;\n",
      'src/cli/commands/download.ts': "import { t } from './download-targets.js';\nexport const r = t;\n",
      'src/cli/commands/download-targets.ts': "import { w } from './query.js';\nexport const t = w;\n",
      'src/cli/commands/query.ts': "import { f } from '../format.js';\nexport const w = f;\n",
      'src/cli/format.ts': 'export const f = 1;\n',
    });
    expect((await violations(base)).sort()).toEqual([
      'commands-stay-apart: src/cli/commands/download-targets.ts -> src/cli/commands/query.ts',
      'commands-stay-apart: src/cli/commands/sync.ts -> src/cli/commands/download.ts',
    ]);
  });

  it('fails a folder it does not name, both ways: an import into it and an import out of it', async () => {
    const base = await tree({
      'src/core/errors.ts': "import { x } from '../elsewhere/x.js';\nexport const e = x;\n",
      'src/elsewhere/x.ts': "import { program } from '../cli/program.js';\nexport const x = program;\n",
      'src/cli/program.ts': 'export const program = 1;\n',
    });
    expect((await violations(base)).sort()).toEqual([
      'outside-the-layers-imports: src/elsewhere/x.ts -> src/cli/program.ts',
      'outside-the-layers: src/core/errors.ts -> src/elsewhere/x.ts',
    ]);
  });

  it('places sync above the engines and below the command line', async () => {
    const base = await tree({
      'src/coverage/status.ts': "import { s } from '../sync/run.js';\nexport const c = s;\n",
      'src/sync/run.ts': "import { program } from '../cli/program.js';\nexport const s = program;\n",
      'src/sync/ok.ts': "import { d } from '../download/engine.js';\nexport const o = d;\n",
      'src/download/engine.ts': 'export const d = 1;\n',
      'src/cli/program.ts': 'export const program = 1;\n',
    });
    expect((await violations(base)).sort()).toEqual([
      'compositions-imports-upward: src/sync/run.ts -> src/cli/program.ts',
      'engines-imports-upward: src/coverage/status.ts -> src/sync/run.ts',
    ]);
  });
});
