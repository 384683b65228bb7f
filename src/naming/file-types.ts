/** The parsed forms of every kind of file the archive holds, of both generations. */
import type { AncillaryExtension, DataLevel, Instrument, MISSION, ScienceExtension } from './mission.js';

/**
 * Which naming generation a name belongs to: the first specification's (`vXX-YY`, two dates) or today's
 * archive's (`vNNN.NNNN` or `vNNN`, one date, SPICE kernels and the other kinds).
 */
export type Generation = 'spec' | 'today';

/** The kinds of file, in the order a bare name of today's generation is tried (ARCHIVE-TODAY §1.6). */
export const FILE_KINDS = ['science', 'ancillary', 'spice', 'quicklook', 'dependency', 'release'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** What every parsed file has. */
export interface FileBase {
  mission: typeof MISSION;
  generation: Generation;
  /** The version as the name writes it (`v01-00`, `v001.0002`, `v001`; a SPICE kernel's digits). */
  version: string;
  /** The file name. */
  name: string;
  /** The storage path: the key in the archive, and the file's place below a local data root. */
  path: string;
}

/**
 * A science product's parts, shared by science files, quicklooks and dependency files (today's quicklooks and
 * dependency files are named by the science grammar with their own extensions).
 */
export interface ProductParts extends FileBase {
  instrument: Instrument;
  dataLevel: DataLevel;
  descriptor: string;
  /** `YYYYMMDD`. */
  startDate: string;
  /** The specification's second date; undefined for today's names, which have one. */
  endDate: string | undefined;
  /** Today's `-repointNNNNN` suffix as a number; undefined when the name has none. */
  repointing: number | undefined;
  /** Today's `-crNNNNN` (Carrington rotation) suffix as a number; undefined when the name has none. */
  cr: number | undefined;
}

/** A parsed science file name (storage path `imap/<instrument>/<level>/<YYYY>/<MM>/<name>`). */
export interface ScienceFile extends ProductParts {
  kind: 'science';
  extension: ScienceExtension;
}

/** A quicklook plot of a science product (`imap/quicklook/<instrument>/<level>/<YYYY>/<MM>/<name>`). */
export interface QuicklookFile extends ProductParts {
  kind: 'quicklook';
  generation: 'today';
  extension: 'jpg' | 'pdf' | 'png';
}

/** A science product's dependency file (`imap/dependency/<instrument>/<level>/<YYYY>/<MM>/<name>`). */
export interface DependencyFile extends ProductParts {
  kind: 'dependency';
  generation: 'today';
  extension: 'json';
}

/** A file named by instrument, descriptor and dates without a level: ancillary files and release manifests. */
export interface DatedParts extends FileBase {
  instrument: Instrument;
  descriptor: string;
  /** `YYYYMMDD`. */
  startDate: string;
  /** Absent when the name carries a single date. */
  endDate: string | undefined;
}

/** A parsed ancillary file name (`imap/ancillary/<instrument>/<name>`). */
export interface AncillaryFile extends DatedParts {
  kind: 'ancillary';
  extension: AncillaryExtension;
}

/** A release manifest (`imap/release/<instrument>/<name>`). */
export interface ReleaseFile extends DatedParts {
  kind: 'release';
  generation: 'today';
  extension: 'txt';
}

/** A SPICE kernel (`imap/spice/<folder>/<name>`). */
export interface SpiceFile extends FileBase {
  kind: 'spice';
  generation: 'today';
  /** The kernel type the archive files it under (the query's `--type`), e.g. `leapseconds`. */
  kernelType: string;
  /** The folder below `imap/spice/`, e.g. `lsk`. */
  folder: string;
  /** First day the kernel covers, `YYYYMMDD`; undefined when its name carries no date. */
  startDate: string | undefined;
  /** Last day the kernel covers, `YYYYMMDD`; undefined when its name carries no end. */
  endDate: string | undefined;
  /** The name's extension (the text after its last dot). */
  extension: string;
}

/** A parsed file of any kind. */
export type MissionFile =
  | ScienceFile
  | AncillaryFile
  | SpiceFile
  | QuicklookFile
  | DependencyFile
  | ReleaseFile;

/** A file of a science product (science, quicklook, dependency): instrument, level, descriptor, one day. */
export type ProductFile = ScienceFile | QuicklookFile | DependencyFile;

/** A file of an instrument: every kind but SPICE. */
export type InstrumentFile = Exclude<MissionFile, SpiceFile>;

/** True when the file belongs to an instrument (every kind but SPICE). */
export function isInstrumentFile(file: MissionFile): file is InstrumentFile {
  return file.kind !== 'spice';
}

/** True when the file is of a science product (science, quicklook, dependency). */
export function isProductFile(file: MissionFile): file is ProductFile {
  return file.kind === 'science' || file.kind === 'quicklook' || file.kind === 'dependency';
}

/** A name some kind's grammar fits but whose rules it breaks: what is wrong, for a hint. */
export interface Refusal {
  refused: FileKind;
  problems: string[];
  /** True when the name's extension is one of the refusing kind's: its problems are then the ones that matter. */
  extensionFits: boolean;
}

/** True when a grammar's answer is a refusal. */
export function isRefusal(value: MissionFile | Refusal | undefined): value is Refusal {
  return value !== undefined && 'refused' in value;
}
