/**
 * The command declarations (src/cli/declarations/) are loaded by every run, `--help` included: each may import
 * only commander, Node's builtins and the small shared modules named here, and reaches its command's body with
 * `import()` of `../commands/<name>.js`, when the command runs. The import statements are read with
 * TypeScript's parser; a type-only import (`import type`) is erased and may name any module of the command line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDER = join(ROOT, 'src/cli/declarations');

/** What a declaration may load with the program. */
const LIGHT: readonly RegExp[] = [
  /^commander$/,
  /^\.\.\/options\.js$/, // the shared flag tables and parsers
  /^\.\.\/examples\.js$/, // each command's examples, text only
  /^\.\.\/\.\.\/core\/errors\.js$/, // exit codes and error classes
  /^\.\.\/\.\.\/server\/backend-registry\.js$/, // the backends' declared settings, `serve`'s flags (their implementations load when opened)
  /^\.\/[\w-]+\.js$/, // another file of the folder (checked here too)
];
/** What a type-only import may name besides: erased from the JavaScript, it loads nothing. */
const TYPES_ONLY: readonly RegExp[] = [
  /^\.\.\/io\.js$/,
  /^\.\.\/commands\/[\w-]+\.js$/,
  /^\.\.\/completion\/model\.js$/,
];
/** What `import()` may load: a command's body, when it runs. */
const BODIES = /^\.\.\/commands\/[\w-]+\.js$/;

const matches = (patterns: readonly RegExp[], specifier: string) =>
  isBuiltin(specifier) || patterns.some((pattern) => pattern.test(specifier));

/** The imports of a module's text the rules refuse, each as `what 'specifier'`. */
function refusedImports(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const refused: string[] = [];
  const specifier = (node: ts.Node | undefined) =>
    node && ts.isStringLiteralLike(node) ? node.text : node ? node.getText(source) : '';
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      // `import { type X } from …` is kept as `import {} from …` (verbatimModuleSyntax): it loads the module.
      const typeOnly = node.importClause?.isTypeOnly === true;
      const from = specifier(node.moduleSpecifier);
      if (!matches(typeOnly ? [...LIGHT, ...TYPES_ONLY] : LIGHT, from)) {
        refused.push(`${typeOnly ? 'import type' : 'import'} '${from}'`);
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const from = specifier(node.moduleSpecifier);
      if (!matches(node.isTypeOnly ? [...LIGHT, ...TYPES_ONLY] : LIGHT, from)) {
        refused.push(`export from '${from}'`);
      }
    } else if (ts.isImportEqualsDeclaration(node)) {
      refused.push(`import = '${node.moduleReference.getText(source)}'`);
    } else if (ts.isCallExpression(node)) {
      const [argument] = node.arguments;
      const from = specifier(argument);
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        if (!(argument && ts.isStringLiteralLike(argument) && BODIES.test(from))) {
          refused.push(`import('${from}')`);
        }
      } else if (ts.isIdentifier(node.expression) && node.expression.text === 'require') {
        refused.push(`require('${from}')`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refused;
}

describe('the command declarations import nothing heavy', () => {
  const files = readdirSync(FOLDER).filter((name) => name.endsWith('.ts'));

  it('finds the declarations', () => {
    expect(files).toContain('query.ts');
    expect(files).toContain('config.ts');
  });

  it.each(files)('%s imports only commander, builtins and the small shared modules', (name) => {
    expect(
      refusedImports(name, readFileSync(join(FOLDER, name), 'utf8')),
      "every run loads the declarations: reach a command's body with import('../commands/<name>.js'), or name a small module in LIGHT, with its reason",
    ).toEqual([]);
  });

  it('program.ts reaches the command bodies only through the declarations', () => {
    const text = readFileSync(join(ROOT, 'src/cli/program.ts'), 'utf8');
    expect(text).not.toMatch(/from '\.\/commands\//);
    expect(text).not.toMatch(/import\('\.\/commands\//);
  });

  it('refuses a heavy import, however it is written', () => {
    const refused = (text: string) => refusedImports('probe.ts', text);
    expect(refused("import { createClient } from '../../api.js';")).toEqual(["import '../../api.js'"]);
    expect(refused("import { type MissionDataClient } from '../../api.js';")).toEqual([
      "import '../../api.js'",
    ]);
    expect(refused("import { clientFor } from '../io.js';")).toEqual(["import '../io.js'"]);
    expect(refused("import '../progress.js';")).toEqual(["import '../progress.js'"]);
    expect(refused("export { sync } from '../../sync/index.js';")).toEqual([
      "export from '../../sync/index.js'",
    ]);
    expect(refused("const m = await import('../../server/index.js');")).toEqual([
      "import('../../server/index.js')",
    ]);
    expect(refused('const m = await import(name);')).toEqual(["import('name')"]);
    expect(refused("const u = require('undici');")).toEqual(["require('undici')"]);
    expect(refused("import type { Server } from '../../server/index.js';")).toEqual([
      "import type '../../server/index.js'",
    ]);
  });

  it('lets through what a declaration needs', () => {
    const text = [
      "import { readFileSync } from 'node:fs';",
      "import { Option } from 'commander';",
      "import { ExitCode } from '../../core/errors.js';",
      "import type { CommandIO } from '../io.js';",
      "import type { CompletionShell } from '../commands/completion.js';",
      "import { EXAMPLES } from '../options.js';",
      "import type { CommandDeclaration } from './declaration.js';",
      "const body = () => import('../commands/query.js');",
    ].join('\n');
    expect(refusedImports('probe.ts', text)).toEqual([]);
  });
});
