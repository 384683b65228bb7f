/**
 * The kinds of file name, one entry each: how a name is read, where the file is stored, and the naming fields of
 * its query record. `TODAY_GRAMMARS` is the order a name of today's generation is tried in (ARCHIVE-TODAY §1.6:
 * science, ancillary, SPICE, quicklook, dependency, release): the next kind the mission adds is one entry there.
 */
import {
  type FileKind,
  type Generation,
  isProductFile,
  type MissionFile,
  type Refusal,
} from './file-types.js';
import { ANCILLARY_FOLDER } from './mission.js';
import { readSpiceName } from './spice.js';
import {
  readDependency,
  readQuicklook,
  readRelease,
  readTodayAncillary,
  readTodayScience,
} from './today-names.js';
import { parseVersion } from './versions.js';

/** What one folder of a storage path stands for, so a misplaced file's message can say which is wrong. */
export type FolderRole =
  | 'mission'
  | 'instrument'
  | 'level'
  | 'year'
  | 'month'
  | 'kernel'
  | { under: string; files: string };

/** A record's naming fields, as the service lists them (the server adds `ingestion_date`). */
export type RecordFields = Record<string, string | number | null>;

/** One kind of file name. */
export interface NameGrammar {
  kind: FileKind;
  generation: Generation;
  /** The file when the grammar fits and every rule holds; a refusal when it fits and a rule breaks; else undefined. */
  read(name: string): MissionFile | Refusal | undefined;
  /** The storage path's layout, for messages. */
  layout: string;
  /** What each folder of the storage path stands for, in order. */
  folders: readonly FolderRole[];
  /** The query table the service lists such files in. */
  table: string;
  /** The naming fields of the file's query record. */
  record(file: MissionFile): RecordFields;
}

const PRODUCT_FOLDERS: readonly FolderRole[] = ['mission', 'instrument', 'level', 'year', 'month'];
const under = (word: string, files: string): FolderRole => ({ under: word, files });

/** A science product's record of today: no `end_date` (the archive's client tells tables apart by it). */
function productRecord(file: MissionFile): RecordFields {
  if (!isProductFile(file)) return {};
  const version = parseVersion(file.version);
  return {
    file_path: file.path,
    instrument: file.instrument,
    data_level: file.dataLevel,
    descriptor: file.descriptor,
    start_date: file.startDate,
    repointing: file.repointing ?? null,
    cr: file.cr ?? null,
    version: file.version,
    major_version: version?.major ?? null,
    minor_version: version?.minor ?? null,
    extension: file.extension,
  };
}

/** The record of a file named by instrument, descriptor and dates: `end_date` always present, null for one date. */
function datedRecord(file: MissionFile): RecordFields {
  if (file.kind !== 'ancillary' && file.kind !== 'release') return {};
  return {
    file_path: file.path,
    instrument: file.instrument,
    descriptor: file.descriptor,
    start_date: file.startDate,
    end_date: file.endDate ?? null,
    version: file.version,
    extension: file.extension,
  };
}

/** `YYYY-MM-DDT00:00:00` (or the day's last second) of a `YYYYMMDD`; null for none. */
function isoDay(day: string | undefined, last: boolean): string | null {
  if (day === undefined) return null;
  return `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}T${last ? '23:59:59' : '00:00:00'}`;
}

/** The kinds of today's generation, in the order a name is tried. */
export const TODAY_GRAMMARS: readonly NameGrammar[] = [
  {
    kind: 'science',
    generation: 'today',
    read: readTodayScience,
    layout: '<mission>/<instrument>/<data_level>/<year>/<month>/<filename>',
    folders: PRODUCT_FOLDERS,
    table: 'science',
    record: productRecord,
  },
  {
    kind: 'ancillary',
    generation: 'today',
    read: readTodayAncillary,
    layout: `<mission>/${ANCILLARY_FOLDER}/<instrument>/<filename>`,
    folders: ['mission', under(ANCILLARY_FOLDER, 'ancillary files'), 'instrument'],
    table: 'ancillary',
    record: datedRecord,
  },
  {
    kind: 'spice',
    generation: 'today',
    read: readSpiceName,
    layout: '<mission>/spice/<kernel folder>/<filename>',
    folders: ['mission', under('spice', 'SPICE kernels'), 'kernel'],
    table: 'spice',
    record: (file) =>
      file.kind !== 'spice'
        ? {}
        : {
            file_path: file.path,
            file_name: file.name,
            kernel_type: file.kernelType,
            min_date_datetime: isoDay(file.startDate, false),
            max_date_datetime: isoDay(file.endDate, true),
            version: file.version,
            extension: file.extension,
          },
  },
  {
    kind: 'quicklook',
    generation: 'today',
    read: readQuicklook,
    layout: '<mission>/quicklook/<instrument>/<data_level>/<year>/<month>/<filename>',
    folders: ['mission', under('quicklook', 'quicklooks'), ...PRODUCT_FOLDERS.slice(1)],
    table: 'quicklook',
    record: productRecord,
  },
  {
    kind: 'dependency',
    generation: 'today',
    read: readDependency,
    layout: '<mission>/dependency/<instrument>/<data_level>/<year>/<month>/<filename>',
    folders: ['mission', under('dependency', 'dependency files'), ...PRODUCT_FOLDERS.slice(1)],
    table: 'dependency',
    record: productRecord,
  },
  {
    kind: 'release',
    generation: 'today',
    read: readRelease,
    layout: '<mission>/release/<instrument>/<filename>',
    folders: ['mission', under('release', 'release manifests'), 'instrument'],
    table: 'release',
    record: datedRecord,
  },
];

/** The specification's two kinds: read by `parseSpecName`, laid out and listed as they always were. */
export const SPEC_GRAMMARS: readonly Omit<NameGrammar, 'read'>[] = [
  {
    kind: 'science',
    generation: 'spec',
    layout: '<mission>/<instrument>/<data_level>/<year>/<month>/<filename>',
    folders: PRODUCT_FOLDERS,
    table: 'science',
    record: (file) =>
      file.kind !== 'science'
        ? {}
        : {
            file_path: file.path,
            instrument: file.instrument,
            data_level: file.dataLevel,
            descriptor: file.descriptor,
            start_date: file.startDate,
            end_date: file.endDate ?? null,
            version: file.version,
            extension: file.extension,
          },
  },
  {
    kind: 'ancillary',
    generation: 'spec',
    layout: `<mission>/${ANCILLARY_FOLDER}/<instrument>/<filename>`,
    folders: ['mission', under(ANCILLARY_FOLDER, 'ancillary files'), 'instrument'],
    table: 'ancillary',
    record: datedRecord,
  },
];

/** The grammar entry a parsed file was read by. */
export function grammarOf(file: MissionFile): Omit<NameGrammar, 'read'> {
  const list: readonly Omit<NameGrammar, 'read'>[] =
    file.generation === 'spec' ? SPEC_GRAMMARS : TODAY_GRAMMARS;
  return list.find((grammar) => grammar.kind === file.kind) as Omit<NameGrammar, 'read'>;
}

/** The naming fields of a file's query record, as the service lists files of its kind and generation. */
export function recordFields(file: MissionFile): RecordFields {
  return grammarOf(file).record(file);
}

/** The query table that lists a file. */
export function tableOf(file: MissionFile): string {
  return grammarOf(file).table;
}
