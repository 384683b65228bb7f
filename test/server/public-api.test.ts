/**
 * The public names of `mission-data/server`, pinned: what `startReferenceServer` takes and returns, the errors it
 * rejects with, and the demo archive. A name added to or taken from the entry fails here until this list (and
 * CHANGELOG.md) says so: values as the module exports them (the source, and the bundle that ships), types as the
 * entry's source and its declaration output spell them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as server from '../../src/server/index.js';
import { unexportedTypesInSignatures } from '../helpers/public-types.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The values of the entry: a function, classes, helpers of the demo archive. */
const VALUES = [
  'MissionDataError',
  'StoreError',
  'UsageError',
  'isBucketStore',
  'isStoreEmpty',
  'startReferenceServer',
  'writeDemoArchive',
];

/** The names the entry exports as types only. */
const TYPES = [
  'AmzChecksum',
  'BackendOptions',
  'ChecksumAlgorithm',
  'Dialect',
  'DrainReport',
  'ErrorCode',
  'ErrorOptions',
  'ExitCodeValue',
  'FaultOptions',
  'ReferenceServer',
  'ReferenceServerOptions',
  'ReindexReport',
  'RequestLogEntry',
  'S3Settings',
  'ServerEvent',
  'ServingOptions',
  'StoreLocation',
  'StoreSettings',
  'WireMode',
];

/** The names a module's text exports, each as a value or as a type only; `*` for an `export *`. */
function exportedNames(file: string): { values: string[]; types: string[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const values: string[] = [];
  const types: string[] = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (!clause || !ts.isNamedExports(clause)) values.push('*');
      else
        for (const element of clause.elements)
          (statement.isTypeOnly || element.isTypeOnly ? types : values).push(element.name.text);
    } else if (ts.isExportAssignment(statement)) {
      values.push('default');
    } else if (isExported(statement)) {
      const declared = declaredNames(statement, source);
      (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) ? types : values).push(
        ...declared,
      );
    }
  }
  return { values: values.sort(), types: types.sort() };
}

function isExported(statement: ts.Statement): boolean {
  return (
    ts.canHaveModifiers(statement) &&
    (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/** The names an exported declaration declares (a marked snippet of it when this does not know its kind). */
function declaredNames(statement: ts.Statement, source: ts.SourceFile): string[] {
  if (ts.isVariableStatement(statement))
    return statement.declarationList.declarations.map((declaration) => declaration.name.getText(source));
  if (
    (ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isFunctionDeclaration(statement) ||
      ts.isClassDeclaration(statement) ||
      ts.isEnumDeclaration(statement)) &&
    statement.name
  )
    return [statement.name.text];
  return [`? ${statement.getText(source).slice(0, 40)}`];
}

describe('the mission-data/server entry', () => {
  it('exports exactly these values', () => {
    expect(Object.keys(server).sort()).toEqual(VALUES);
  });

  it('exports exactly these names in its source: the values, and these types', () => {
    expect(exportedNames(join(ROOT, 'src/server/index.ts'))).toEqual({ values: VALUES, types: TYPES });
  });

  it('exports every type its public names use, so that a program can name what it receives', () => {
    expect(unexportedTypesInSignatures(join(ROOT, 'src/server/index.ts'))).toEqual([]);
  }, 30_000);

  describe('as built', () => {
    const bundle = join(ROOT, 'dist/server/index.js');
    const declarations = join(ROOT, 'dist/server/index.d.ts');
    if (!existsSync(bundle) || !existsSync(declarations))
      throw new Error('dist/ is missing: run `npm run build` first');

    it('the bundle exports the same values, and the error classes the client entry exports', async () => {
      const built = (await import(pathToFileURL(bundle).href)) as Record<string, unknown>;
      expect(Object.keys(built).sort()).toEqual(VALUES);
      // One class in a chunk both entries load: `instanceof` holds whichever entry it was imported from.
      const client = (await import(pathToFileURL(join(ROOT, 'dist/index.js')).href)) as Record<
        string,
        unknown
      >;
      expect(built.UsageError).toBe(client.UsageError);
    });

    it('the declarations export the same values and types', () => {
      expect(exportedNames(declarations)).toEqual({ values: VALUES, types: TYPES });
    });
  });
});
