/** What `coverage` and `status` answer: a calendar of what the archive holds, and how a local copy differs. */

/** What one day of a product's calendar shows. */
export type DayState =
  /** No file of the product starts that day. */
  | 'missing'
  /** The archive holds a file for the day; the data root has none. */
  | 'archive'
  /** The data root holds the archive's latest version for the day. */
  | 'local'
  /** The data root holds a file for the day, but the archive has a newer version. */
  | 'outdated';

/** One day of one product. */
export interface CoverageDay {
  /** `YYYYMMDD`. */
  date: string;
  state: DayState;
  /** The latest version the archive holds for the day (absent on a missing day). */
  version?: string | undefined;
  /** The storage path of that latest version. */
  filePath?: string | undefined;
  /** The highest version the data root holds for the day, when it holds one. */
  localVersion?: string | undefined;
}

/** A run of days without a file, both ends included. */
export interface CoverageGap {
  /** `YYYYMMDD`. */
  start: string;
  /** `YYYYMMDD`. */
  end: string;
  days: number;
}

/** The calendar of one product: an instrument, a data level (none for ancillary files) and a descriptor. */
export interface ProductCoverage {
  table: 'science' | 'ancillary';
  instrument: string;
  /** Absent for ancillary files. */
  dataLevel?: string | undefined;
  descriptor: string;
  /** Every day of the report's range, in order. */
  days: CoverageDay[];
  /** How many days of the range have a file. */
  present: number;
  /** The runs of days without a file, in order. */
  gaps: CoverageGap[];
}

/** What `coverage` answers. */
export interface CoverageReport {
  /** First day of the range (`YYYYMMDD`): the `startDate` filter, or the first day with a file. */
  startDate: string;
  /** Last day of the range (`YYYYMMDD`): the `endDate` filter, or the last day with a file. */
  endDate: string;
  /** One calendar per product with a file in the range, ordered by instrument, level and descriptor. */
  products: ProductCoverage[];
  /** True when the data root does not exist (yet): nothing is held, and the calendar shows the archive alone. */
  rootMissing?: boolean | undefined;
}

/** How a local file, or a file of the archive, differs between the two. */
export type StatusKind =
  /** The archive's latest version of a file the data root has no version of. */
  | 'missing'
  /** A local file whose product and day have a newer version in the archive. */
  | 'outdated'
  /** A local file the archive does not hold, or whose name or place breaks the naming rules. */
  | 'extra'
  /** A local file whose bytes no longer match those verified when it was downloaded. */
  | 'changed';

/** One line of `status`. */
export interface StatusEntry {
  status: StatusKind;
  /** The storage path (for `extra`, the path below the data root). */
  path: string;
  /** The file's place on this machine (absent for `missing`, where it would go is `resolveLocalPath`). */
  localPath?: string | undefined;
  /** For `outdated`: the storage path of the archive's latest version. */
  newer?: string | undefined;
  /** For `extra` and `changed`: why, in words; for `missing`, what is in the file's place when something is. */
  reason?: string | undefined;
}

/** What `status` answers. */
export interface StatusReport {
  /** True when nothing is missing, outdated, extra or changed. */
  inStep: boolean;
  /** Every difference, ordered by path. */
  entries: StatusEntry[];
  counts: Record<StatusKind, number>;
  /** Local files of the archive the data root holds (any version). */
  localFiles: number;
  /** Of those, how many the download record does not vouch for: their bytes could not be compared. */
  unrecorded: number;
  /** Files of the archive in scope (every version). */
  archiveFiles: number;
  /** Of those, the current ones: the latest version of each product and day (what a copy in step holds). */
  currentFiles: number;
  /** Current files the data root holds in their latest version. */
  currentHere: number;
  /** True when the data root does not exist (yet): every file of the archive is missing from it. */
  rootMissing?: boolean | undefined;
}
