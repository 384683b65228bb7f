/**
 * The data root has one owner, `src/data-root/`: outside it no file of src/ builds a path inside the state folder
 * or spells a part file's name (read here from the sources), and `DataRoot` does what the engines and sync ask
 * of it: opened on a fresh folder, a sync's lock refused to a second holder, this process's part files removed
 * and another's kept, everything closed once.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { cruise } from 'dependency-cruiser';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BusyError } from '../../src/core/errors.js';
import { DataRoot } from '../../src/data-root/index.js';
import { STATE_FOLDER, STATE_NAMES } from '../../src/data-root/state-folder.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

/** What builds a name of the data root's own files: data-root's functions and constants of names. */
const BUILDERS = new Set([
  'partPath',
  'recordPath',
  'partPidOf',
  'stateFolder',
  'STATE_FOLDER',
  'STATE_NAMES',
  'syncId',
]);

/** True when a piece of a string (a literal, or the text of a template between its substitutions) names one. */
function namesStateFile(text: string): boolean {
  const segments = text.split(/[/\\]/);
  return (
    text.includes(STATE_FOLDER) ||
    text.includes('.part.') ||
    [
      STATE_NAMES.verifiedRecord,
      STATE_NAMES.inodeProbe,
      STATE_NAMES.learnedConnections,
      STATE_NAMES.caseProbe,
    ].some((name) => text.includes(name)) ||
    segments.includes(STATE_NAMES.runs) ||
    segments.some((segment) => segment.startsWith(STATE_NAMES.syncPrefix)) ||
    text.endsWith(STATE_NAMES.lockSuffix)
  );
}

/** Where the source `text` of `file` (a path below src/) builds a name of the data root's own files. */
function stateFileNames(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      /(^|\/)data-root\//.test(resolve(join(SRC, dirname(file)), node.moduleSpecifier.text).slice(SRC.length))
    ) {
      const named = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
      if (named && (ts.isNamedImports(named) || ts.isNamedExports(named))) {
        for (const element of named.elements) {
          const name = (element.propertyName ?? element.name).text;
          if (BUILDERS.has(name)) at(element, `takes ${name} from ${node.moduleSpecifier.text}`);
        }
      }
    }
    // A string, or a piece of a template between its substitutions; a module's name is not a path built.
    const moduleName =
      node.parent !== undefined &&
      (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent));
    if (
      (ts.isStringLiteral(node) || ts.isTemplateLiteralToken(node)) &&
      !moduleName &&
      namesStateFile(node.text)
    ) {
      at(node, `spells ${JSON.stringify(node.text)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every .ts file of src/ outside data-root/ and server/, as a path below src/. */
function outsideFiles(folder = SRC): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    const below = relative(SRC, path).replaceAll('\\', '/');
    if (below === 'data-root' || below === 'server') return [];
    if (statSync(path).isDirectory()) return outsideFiles(path);
    return below.endsWith('.ts') ? [below] : [];
  });
}

describe('the data root has one owner', () => {
  it('no file of src/ outside data-root/ (and the server) builds a path of its state folder or of a part file', () => {
    const files = outsideFiles();
    expect(files).toContain('sync/run.ts');
    expect(files).toContain('download/part/part-file.ts');
    const found = files.flatMap((file) => stateFileNames(file, readFileSync(join(SRC, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('catches each way of building one: a builder taken from data-root, a name spelled out', () => {
    // Sync removing the download's part files itself, as it once did.
    const removal = [
      "import { partPath, recordPath } from '../data-root/part-names.js';",
      "import { stateFolder } from '../data-root/state-folder.js';",
      'const part = partPath(file.localPath, process.pid);',
      'await rm(recordPath(part));',
      'await acquireLock(stateFolder(dataDir), id, what);',
    ].join('\n');
    expect(stateFileNames('sync/run.ts', removal)).toEqual([
      'sync/run.ts:1: takes partPath from ../data-root/part-names.js',
      'sync/run.ts:1: takes recordPath from ../data-root/part-names.js',
      'sync/run.ts:2: takes stateFolder from ../data-root/state-folder.js',
    ]);
    const spelled = [
      "join(root, '.mission-data', 'verified.jsonl');",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template, for the reader above
      'const part = `${destination}.part.${process.pid}`;',
      "join(state, 'runs', entry);",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template, for the reader above
      'const lock = `${folder}/sync-${hash}.lock`;',
      "const fine = ['sync', 'the runs of a batch', 'mission-data'];",
    ].join('\n');
    expect(stateFileNames('coverage/x.ts', spelled).map((line) => line.split(': ')[0])).toEqual([
      'coverage/x.ts:1',
      'coverage/x.ts:1',
      'coverage/x.ts:2',
      'coverage/x.ts:3',
      'coverage/x.ts:4',
      'coverage/x.ts:4',
    ]);
  });

  it('is held by a rule of .dependency-cruiser.cjs: outside data-root/, only its entry is imported', async () => {
    const base = await mkdtemp(join(tmpdir(), 'data-root-rule-'));
    try {
      const files: Record<string, string> = {
        'src/sync/run.ts':
          "import { DataRoot } from '../data-root/index.js';\nimport { a } from '../data-root/sync-lock.js';\nexport const r = [DataRoot, a];\n",
        'src/data-root/index.ts': "import { a } from './sync-lock.js';\nexport const DataRoot = a;\n",
        'src/data-root/sync-lock.ts': 'export const a = 1;\n',
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(base, path)), { recursive: true });
        await writeFile(join(base, path), text);
      }
      const rules = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs'));
      const { tsConfig: _tsConfig, ...options } = rules.options;
      const result = await cruise(['src'], {
        ...options,
        baseDir: base,
        validate: true,
        ruleSet: { forbidden: rules.forbidden },
      });
      if (typeof result.output === 'string') throw new Error('dependency-cruiser gave text, not a result');
      expect(result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([
        'data-root-through-its-entry: src/sync/run.ts -> src/data-root/sync-lock.ts',
      ]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe('DataRoot', () => {
  let home: string;
  const identity = { url: 'http://service.test', filters: { instrument: 'mag' }, allVersions: false };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'data-root-owner-'));
    // The host id is kept in the configuration folder: this test's own.
    vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    await rm(home, { recursive: true, force: true });
  });

  it('opens on a fresh folder without making anything there until asked, and makes it when asked to write', async () => {
    const dir = join(home, 'fresh', 'root');
    const reader = await DataRoot.open(dir);
    expect(reader.realPath).toBe(resolve(dir));
    expect((await reader.readSyncState(identity)).first).toBe(true);
    expect([...(await reader.readVerified()).entries()]).toEqual([]);
    await reader.close();
    expect(existsSync(join(home, 'fresh'))).toBe(false);

    const writer = await DataRoot.open(dir, { writable: true });
    expect(await readdir(dir)).toEqual([]);
    await writer.verified();
    expect(await readdir(dir)).toEqual([STATE_FOLDER]);
    await writer.close();
  });

  it("refuses a sync's lock to a second holder, in this process too, until it is released", async () => {
    const dir = join(home, 'locked');
    const first = await DataRoot.open(dir, { writable: true });
    const second = await DataRoot.open(dir, { writable: true });
    try {
      const lock = await first.lockSync(identity);
      for (const holder of [first, second]) {
        const refused = await holder.lockSync(identity).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(BusyError);
        expect((refused as BusyError).exitCode).toBe(75);
        expect((refused as BusyError).message).toContain(`(process ${process.pid}, since`);
      }
      // Another selection's lock is another lock.
      await (await second.lockSync({ ...identity, allVersions: true })).release();
      await lock.release();
      expect(existsSync(lock.file)).toBe(false);
      const taken = await second.lockSync(identity);
      expect(existsSync(taken.file)).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    expect((await readdir(join(dir, STATE_FOLDER))).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });

  it("removes this process's part files of the destinations given, and keeps another process's", async () => {
    const dir = join(home, 'parts');
    const folder = join(dir, 'imap/mag/l1a/2025/01');
    await mkdir(folder, { recursive: true });
    const destination = join(folder, 'imap_mag_l1a_norm-mago_20250101_v001.cdf');
    const other = process.pid + 1;
    const names = [
      'imap_mag_l1a_norm-mago_20250101_v001.cdf',
      `imap_mag_l1a_norm-mago_20250101_v001.cdf.part.${process.pid}`,
      `imap_mag_l1a_norm-mago_20250101_v001.cdf.part.${process.pid}.json`,
      `imap_mag_l1a_norm-mago_20250101_v001.cdf.part.${other}`,
      `imap_mag_l1a_norm-mago_20250101_v001.cdf.part.${other}.json`,
      `imap_mag_l1a_norm-mago_20250102_v001.cdf.part.${process.pid}`,
    ];
    for (const name of names) await writeFile(join(folder, name), 'bytes');
    const root = await DataRoot.open(dir, { writable: true });
    try {
      await root.removeOwnParts([destination]);
      expect((await readdir(folder)).sort()).toEqual(
        [names[0], names[3], names[4], names[5]].sort() as string[],
      );
    } finally {
      await root.close();
    }
  });

  it('closes what it opened, once, however often it is asked to', async () => {
    const dir = join(home, 'closed');
    await mkdir(join(dir, 'imap'), { recursive: true });
    await writeFile(join(dir, 'imap/file.cdf'), 'bytes');
    const root = await DataRoot.open(dir, { writable: true });
    const record = await root.verified();
    record.add('imap/file.cdf', statSync(join(dir, 'imap/file.cdf')), 'md5:00');
    expect(root.joinRuns()).toBeDefined();
    root.learnedConnections({ start: 8, max: 32 }).learn('store.test', 16);
    const lock = await root.lockSync(identity);
    const runs = join(dir, STATE_FOLDER, STATE_NAMES.runs);
    expect(await readdir(runs)).toHaveLength(1);

    await Promise.all([root.close(), root.close()]);
    await root.close();
    expect(await readdir(runs)).toEqual([]);
    expect(existsSync(lock.file)).toBe(false);
    expect(await readFile(join(dir, STATE_FOLDER, STATE_NAMES.verifiedRecord), 'utf8')).toContain(
      'imap/file.cdf',
    );
    const learned = JSON.parse(
      await readFile(join(dir, STATE_FOLDER, STATE_NAMES.learnedConnections), 'utf8'),
    );
    expect(learned.hosts['store.test'].connections).toBe(16);
    expect(() => root.verified()).toThrow(/was closed/);
  });
});
