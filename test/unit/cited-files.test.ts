/**
 * The map cannot go stale: every file name a README or a comment cites is a file of the repository, and no
 * comment sends the reader to a document outside it. A file renamed or removed without its mentions fails here,
 * naming the place that cites it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the project's own text lives; built output and installed packages are not ours to cite. */
const FOLDERS = ['src', 'test', 'bench', 'scripts', '.ci', 'patches'];
const SKIPPED = new Set(['node_modules', 'dist', '.git', 'coverage']);
/**
 * Names that look like files but are not files of the repository: the runtime, the user's settings file, and the
 * state a data root keeps.
 */
const NOT_FILES = new Set(['Node.js', 'config.json', 'connections.json', '.mission-data/connections.json']);
/** A file name with an extension the project writes, possibly with folders before it. */
const CITATION =
  /(?<![\w@/.:-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|js|cjs|mjs|md|json|sh))(?![\w/])/g;

function filesOf(folder: string, found: string[] = []): string[] {
  if (!existsSync(join(ROOT, folder))) return found;
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) filesOf(path, found);
    else found.push(path);
  }
  return found;
}

const files = [
  ...FOLDERS.flatMap((folder) => filesOf(folder)),
  ...readdirSync(ROOT).filter(
    (name) => name.endsWith('.md') || name.endsWith('.json') || name.endsWith('.cjs'),
  ),
];
const known = new Set(files);
const knownNames = new Set(files.map((file) => basename(file)));

/** True when the code before a `//` closes every string it opens (so the `//` begins a comment). */
function outsideStrings(code: string): boolean {
  return ["'", '"', '`'].every((quote) => code.split(quote).length % 2 === 1);
}

/** The comment lines of a source file, with their numbers: `//` lines and the lines of block comments. */
function commentLines(text: string): Array<[number, string]> {
  const lines: Array<[number, string]> = [];
  let inBlock = false;
  text.split('\n').forEach((line, at) => {
    const trimmed = line.trim();
    if (inBlock || trimmed.startsWith('/*')) {
      lines.push([at + 1, line]);
      inBlock = !trimmed.includes('*/') || (trimmed.startsWith('/*') && trimmed.endsWith('/*'));
      return;
    }
    const slashes = line.indexOf('// ');
    if (slashes >= 0 && outsideStrings(line.slice(0, slashes))) lines.push([at + 1, line.slice(slashes)]);
  });
  return lines;
}

/** The places a citation in `file` may mean: beside the file, from the root, from src/, a `.js` import of a `.ts`. */
function exists(file: string, cited: string): boolean {
  if (NOT_FILES.has(cited)) return true;
  const forms = [cited, cited.replace(/\.js$/, '.ts')];
  const places = forms.flatMap((form) => [
    join(dirname(file), form),
    form,
    join('src', form),
    form.replace(/^dist\//, 'src/'),
  ]);
  if (places.some((place) => known.has(place) || existsSync(join(ROOT, place)))) return true;
  return !cited.includes('/') && forms.some((form) => knownNames.has(form));
}

/** Every citation of a file that is not there, as `place: name`. */
function missingCitations(): string[] {
  const missing: string[] = [];
  for (const file of files) {
    if (!/\.(ts|js|cjs|mjs|md)$/.test(file) || file === 'CHANGELOG.md') continue;
    const text = readFileSync(join(ROOT, file), 'utf8');
    const lines = file.endsWith('.md')
      ? text.split('\n').map((line, at): [number, string] => [at + 1, line])
      : commentLines(text);
    for (const [number, line] of lines) {
      for (const match of line.matchAll(CITATION)) {
        const cited = match[1] as string;
        if (!exists(file, cited)) missing.push(`${relative('.', file)}:${number}: ${cited}`);
      }
    }
  }
  return missing;
}

describe('the map', () => {
  it('cites only files that are in the repository', () => {
    expect(missingCitations()).toEqual([]);
  });

  it('finds a citation of a file that is not there, and accepts one that is', () => {
    expect(exists('src/download/README.md', 'engine.ts')).toBe(true);
    expect(exists('src/cli/README.md', 'core/errors.ts')).toBe(true);
    expect(exists('src/cli/io.ts', 'cli.ts')).toBe(false);
    expect(exists('src/http/undici.ts', 'DESIGN.md')).toBe(false);
    expect(
      commentLines("/** See `gone.ts`. */\nconst a = 'x.ts'; // and `also-gone.ts`\n").map(([, l]) => l),
    ).toEqual(['/** See `gone.ts`. */', '// and `also-gone.ts`']);
  });

  it('every folder of src/ has a README that says what the folder is for', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) =>
      entry.isDirectory(),
    );
    for (const folder of folders) {
      const readme = join(ROOT, 'src', folder.name, 'README.md');
      expect(existsSync(readme), `src/${folder.name}/README.md`).toBe(true);
      const text = readFileSync(readme, 'utf8');
      expect(text, `src/${folder.name}/README.md`).toMatch(/May import/);
      expect(text, `src/${folder.name}/README.md`).toMatch(/Start (at|with|reading)/);
    }
  });
});
