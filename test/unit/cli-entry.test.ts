/**
 * The command bodies (src/cli/commands/) reach the library through its entry, `api.ts`, which says it is the
 * command line's only way in: never the engines, sync, the data root, the service client or the HTTP layer.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const COMMANDS = join(ROOT, 'src/cli/commands');

/** Where a command may import from, each with its reason. */
const ALLOWED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^src\/api(-types)?\.ts$/, "the library's entry and its public types"],
  [/^src\/cli\//, "the command line's own modules (commands-stay-apart keeps each command to its own files)"],
  [/^src\/core\//, 'errors, settings and configuration, which every layer shares'],
  [/^src\/naming\//, 'the naming rules and filter vocabulary, pure and shared by every layer'],
  // Only serve's body loads the reference server (the rule server-only-through-serve says which files).
  [/^src\/server\//, 'the reference server, for the serve command'],
];

/**
 * Imports that go past api.ts until it exports what they take, each with the names it lacks. An entry fails the
 * test once its import is gone, so the list only shrinks.
 */
const WAITING: Readonly<Record<string, readonly string[]>> = {};

/** The src/ files a module's text imports (static, type-only, re-exports and dynamic), relative to the root. */
function importsOf(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) =>
      relative(ROOT, resolve(dirname(join(ROOT, file)), name))
        .split('\\')
        .join(posix.sep)
        .replace(/\.js$/, '.ts'),
    );
}

/** The imports of `file` that go around the library's entry, as `file -> target`. */
function around(file: string, text: string): string[] {
  return importsOf(file, text)
    .filter((target) => !ALLOWED.some(([place]) => place.test(target)))
    .filter((target) => !WAITING[file]?.includes(target))
    .map((target) => `${file} -> ${target}`);
}

async function commandFiles(): Promise<string[]> {
  const entries = await readdir(COMMANDS, { recursive: true });
  return entries
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `src/cli/commands/${name.split('\\').join('/')}`)
    .sort();
}

describe('the command bodies reach the library through api.ts', () => {
  it('holds for src/cli/commands/', async () => {
    const found: string[] = [];
    for (const file of await commandFiles())
      found.push(...around(file, await readFile(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('lists as waiting only imports still there', async () => {
    for (const [file, targets] of Object.entries(WAITING)) {
      const imports = importsOf(file, await readFile(join(ROOT, file), 'utf8'));
      for (const target of targets) expect(imports, `${file} no longer imports ${target}`).toContain(target);
    }
  });

  it('fails an import of an engine, sync, the service or the HTTP layer, type-only and dynamic ones too', () => {
    const text = [
      "import { downloadFiles } from '../../download/engine.js';",
      "import type { StatusReport } from '../../coverage/types.js';",
      "export { verifyFiles } from '../../sync/verify.js';",
      "import type { HttpClient } from '../../service/client.js';",
      "const wire = await import('../../http/wire/pool.js');",
      "import { createClient } from '../../api.js';",
      "import { ExitCode } from '../../core/errors.js';",
      "import { parseName } from '../../naming/names.js';",
      "import { clientFor } from '../io.js';",
      "import { readFile } from 'node:fs/promises';",
    ].join('\n');
    expect(around('src/cli/commands/status.ts', text)).toEqual([
      'src/cli/commands/status.ts -> src/download/engine.ts',
      'src/cli/commands/status.ts -> src/coverage/types.ts',
      'src/cli/commands/status.ts -> src/sync/verify.ts',
      'src/cli/commands/status.ts -> src/service/client.ts',
      'src/cli/commands/status.ts -> src/http/wire/pool.ts',
    ]);
  });
});
