/**
 * The public API of the main entry (`mission-data`, `src/index.ts`), pinned: the runtime values it exports and
 * the names it exports as types only. Adding or removing a public name fails here until the lists below, the
 * README's library section and the changelog say so.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { unexportedTypesInSignatures } from '../helpers/public-types.js';

const INDEX = join(import.meta.dirname, '../../src/index.ts');

/** Runtime values, sorted as `Array.prototype.sort` sorts (upper case first). */
const VALUES = [
  'ANCILLARY_EXTENSIONS',
  'AbortedError',
  'ApiError',
  'BusyError',
  'ConfigError',
  'DATA_LEVELS',
  'ExitCode',
  'FILE_KINDS',
  'INSTRUMENTS',
  'LOCAL_LAYOUT',
  'LocalFileError',
  'MAX_NAME_BYTES',
  'MISSION',
  'MissionDataError',
  'NetworkError',
  'ProtocolError',
  'SCIENCE_EXTENSIONS',
  'SPICE_KERNEL_TYPES',
  'TODAY_DATA_LEVELS',
  'TODAY_INSTRUMENTS',
  'UsageError',
  'ValidationError',
  'compareVersions',
  'createClient',
  'fileFromLocalPath',
  'formatName',
  'isCalendarDate',
  'nameWarning',
  'parseName',
  'parsePath',
  'parsePathOrName',
  'parseScienceName',
  'parseVersion',
  'recordFields',
  'resolveLocalPath',
  'statusTargets',
  'versionRank',
];

/** Names exported as types only (`export type { … }`, `type X` in `export { … }`), sorted. */
const TYPES = [
  'AncillaryExtension',
  'AncillaryFile',
  'ArchiveGlob',
  'ChecksumAlgorithm',
  'Config',
  'CoverageDay',
  'CoverageGap',
  'CoverageReport',
  'CreateClientOptions',
  'DataLevel',
  'DatedParts',
  'DayState',
  'DependencyFile',
  'DownloadOptions',
  'DownloadPreview',
  'DownloadProgress',
  'DownloadResult',
  'DownloadTargets',
  'ErrorCode',
  'ErrorOptions',
  'ExitCodeValue',
  'FileBase',
  'FileKind',
  'Generation',
  'Instrument',
  'InstrumentFile',
  'LocatedFile',
  'MatchingDownload',
  'MatchingOptions',
  'MatchingSelection',
  'MissionDataClient',
  'MissionFile',
  'NameParts',
  'NewerFormRecord',
  'ParsedVersion',
  'Peer',
  'ProductCoverage',
  'ProductFile',
  'ProductParts',
  'ProxySettings',
  'ProxyValue',
  'QueryFilters',
  'QueryOptions',
  'QueryRecord',
  'QueryTable',
  'QuicklookFile',
  'ReceivedRecord',
  'RecordFields',
  'ReleaseFile',
  'ReportOptions',
  'ScienceExtension',
  'ScienceFile',
  'SettingName',
  'SettingSource',
  'SpiceFile',
  'SpiceKernelType',
  'SpiceRecord',
  'StatusEntry',
  'StatusKind',
  'StatusReport',
  'SyncFile',
  'SyncFileStatus',
  'SyncOptions',
  'SyncResult',
  'UncheckedFile',
  'UploadOptions',
  'UploadPreview',
  'UploadProgress',
  'UploadResult',
  'VerifiedAgainst',
  'VerifyEntry',
  'VerifyOptions',
  'VerifyProgress',
  'VerifyReport',
  'VerifyStatus',
];

/** The names `src/index.ts` re-exports, split by kind; any other statement (a declaration, `export *`) is listed. */
async function indexExports(): Promise<{ values: string[]; types: string[]; other: string[] }> {
  const text = await readFile(INDEX, 'utf8');
  const source = ts.createSourceFile(INDEX, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const values: string[] = [];
  const types: string[] = [];
  const other: string[] = [];
  for (const statement of source.statements) {
    if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier !== undefined &&
      statement.exportClause !== undefined &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const element of statement.exportClause.elements) {
        (statement.isTypeOnly || element.isTypeOnly ? types : values).push(element.name.text);
      }
    } else {
      other.push(statement.getText(source));
    }
  }
  return { values: values.sort(), types: types.sort(), other };
}

describe('the public API of the main entry', () => {
  it('exports exactly these runtime values', async () => {
    const library = await import('../../src/index.js');
    expect(Object.keys(library).sort()).toEqual(VALUES);
  });

  it('exports exactly these names as types only', async () => {
    expect((await indexExports()).types).toEqual(TYPES);
  });

  it('is re-exports by name only, their values those the module holds at run time', async () => {
    const { values, other } = await indexExports();
    expect(other).toEqual([]);
    expect(values).toEqual(VALUES);
  });

  it('keeps the lists apart: no name is both a value and a type-only export', () => {
    expect(VALUES.filter((name) => TYPES.includes(name))).toEqual([]);
    expect(VALUES.length + TYPES.length).toBe(112);
  });
  it('exports every type its public names use, so that a program can name what it receives', () => {
    expect(unexportedTypesInSignatures(INDEX)).toEqual([]);
  }, 30_000);
});
