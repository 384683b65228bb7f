/**
 * `import('mission-data')` is part of every script's start-up: the modules it loads at once (the static imports
 * reachable from src/index.ts and from the command line's entry) must not bring in Node's HTTP, TLS or crypto
 * modules, which only an error message's reason phrase, an `https` URL or a digest need (src/core/on-first-use.ts
 * loads them then), and `import('mission-data')` must not parse the engines (download, upload, sync, verify, coverage),
 * which load with their first call (src/api.ts), nor zod, whose schemas are built as they load (the configuration
 * file's and the query records' load with the first command that needs them), nor the data root's state, nor
 * the coverage report's formats. Read with TypeScript's parser; `import type` loads nothing and
 * is not followed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const HEAVY = ['node:http', 'node:https', 'node:tls', 'node:crypto', 'http', 'https', 'tls', 'crypto'];
const ENGINES = [
  'src/download/engine.ts',
  'src/upload/engine.ts',
  'src/sync/run.ts',
  'src/sync/matching.ts',
  'src/sync/verify.ts',
  'src/coverage/run.ts',
];
/** Loaded with the first call that needs them, not with the library: each builds or holds much of its own. */
const LATER = [
  'src/core/zod.ts',
  'src/core/config-file.ts',
  'src/service/record-schemas.ts',
  'src/data-root/index.ts',
  'src/coverage/formats.ts',
  'src/coverage/status.ts',
  // The service client and the settings load with a client's first call (src/api-open.ts): a script that only
  // parses names never parses the HTTP client.
  'src/service/client.ts',
  'src/http/wire/connection.ts',
  'src/core/config.ts',
];

/** The static, value-carrying import and export specifiers of a TypeScript file. */
function staticImports(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) {
      found.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      found.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return found;
}

/** Every file loaded at once from `entry`, each with the chain of imports that reached it. */
function staticGraph(entry: string): Map<string, string[]> {
  const reached = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const specifier of staticImports(file)) {
      const chain = [...(reached.get(file) ?? []), specifier];
      if (!specifier.startsWith('.')) {
        reached.set(`builtin:${specifier}`, chain);
        continue;
      }
      const target = join(dirname(file), specifier.replace(/\.js$/, '.ts'));
      if (!existsSync(target) || reached.has(target)) continue;
      reached.set(target, chain);
      queue.push(target);
    }
  }
  return reached;
}

describe('what importing the library loads at once', () => {
  for (const entry of ['src/index.ts', 'src/cli/main.ts']) {
    it(`${entry} reaches neither node:http, node:tls nor node:crypto through static imports`, () => {
      const graph = staticGraph(join(ROOT, entry));
      // The walk found what each entry surely loads at once: the errors it throws.
      expect(graph.has(join(ROOT, 'src/core/errors.ts'))).toBe(true);
      const heavy = HEAVY.filter((name) => graph.has(`builtin:${name}`)).map((name) =>
        (graph.get(`builtin:${name}`) ?? []).map((step) => step.replace(`${ROOT}/`, '')).join(' -> '),
      );
      expect(heavy).toEqual([]);
    });
  }

  it('src/index.ts loads no engine at once: each loads with its first call', () => {
    const graph = staticGraph(join(ROOT, 'src/index.ts'));
    const loaded = ENGINES.filter((engine) => graph.has(join(ROOT, engine))).map((engine) =>
      (graph.get(join(ROOT, engine)) ?? []).map((step) => step.replace(`${ROOT}/`, '')).join(' -> '),
    );
    expect(loaded).toEqual([]);
  });

  it('src/index.ts loads neither zod, the data root, the report formats, the service client nor the settings at once', () => {
    const graph = staticGraph(join(ROOT, 'src/index.ts'));
    expect(graph.has('builtin:zod/mini')).toBe(false);
    const loaded = LATER.filter((file) => graph.has(join(ROOT, file))).map((file) =>
      (graph.get(join(ROOT, file)) ?? []).map((step) => step.replace(`${ROOT}/`, '')).join(' -> '),
    );
    expect(loaded).toEqual([]);
  });

  // zod checks what a few commands read (the configuration file, a sync's state, the words of a query record's
  // refusal): a download of named files reads none of them, and zod's schemas take ~4 ms to build as they load.
  it("src/download/engine.ts does not load zod at once (the data root loads a sync's state with the first sync)", () => {
    const graph = staticGraph(join(ROOT, 'src/download/engine.ts'));
    expect(graph.has(join(ROOT, 'src/data-root/index.ts'))).toBe(true);
    const chain = (graph.get('builtin:zod/mini') ?? []).map((step) => step.replace(`${ROOT}/`, ''));
    expect(chain.join(' -> ')).toBe('');
  });

  it('the built library, imported in a fresh process, loads none of the streams, sockets, zlib, TLS, HTTP or crypto', () => {
    const bundle = join(ROOT, 'dist/index.js');
    if (!existsSync(bundle)) throw new Error('dist/ is missing: run `npm run build` first');
    // Node's own modules loaded by the import: `stream` also comes with `process.stdout`, which an ES import of
    // `node:process` reads (see processGlobal in scripts/bundle.js).
    const script = [
      'const before = new Set(process.moduleLoadList);',
      `await import(${JSON.stringify(pathToFileURL(bundle).href)});`,
      'console.log(JSON.stringify(process.moduleLoadList.filter((name) => !before.has(name))));',
    ].join('\n');
    const loaded = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as string[];
    expect(loaded.length).toBeGreaterThan(0);
    const builtins = ['stream', 'net', 'zlib', 'tls', 'http', 'crypto', 'tty'];
    expect(loaded.filter((name) => builtins.includes(name.replace(/^NativeModule /, '')))).toEqual([]);
  });
});
