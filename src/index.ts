/** The mission-data library: the public names, re-exported. */
export type { CreateClientOptions, MissionDataClient, QueryOptions } from './api.js';
export { createClient } from './api.js';
export type { ChecksumAlgorithm } from './core/checksums/checksum.js';
export type { Config, SettingName, SettingSource } from './core/config.js';
export {
  AbortedError,
  ApiError,
  BusyError,
  ConfigError,
  type ErrorCode,
  type ErrorOptions,
  ExitCode,
  type ExitCodeValue,
  LocalFileError,
  MissionDataError,
  NetworkError,
  type Peer,
  ProtocolError,
  UsageError,
  ValidationError,
} from './core/errors.js';
export type { ProxySettings, ProxyValue } from './core/proxy.js';
export type { ReportOptions } from './coverage/run.js';
export { statusTargets } from './coverage/status-targets.js';
export type {
  CoverageDay,
  CoverageGap,
  CoverageReport,
  DayState,
  ProductCoverage,
  StatusEntry,
  StatusKind,
  StatusReport,
} from './coverage/types.js';
export type { DownloadPreview } from './download/engine.js';
export type { DownloadOptions, DownloadProgress, DownloadResult } from './download/types.js';
export type { DownloadTargets } from './naming/download-targets.js';
export type {
  AncillaryFile,
  DatedParts,
  DependencyFile,
  FileBase,
  FileKind,
  Generation,
  InstrumentFile,
  MissionFile,
  ProductFile,
  ProductParts,
  QuicklookFile,
  ReleaseFile,
  ScienceFile,
  SpiceFile,
} from './naming/file-types.js';
export { FILE_KINDS } from './naming/file-types.js';
export type { ArchiveGlob } from './naming/glob.js';
export type { RecordFields } from './naming/grammars.js';
export { recordFields } from './naming/grammars.js';
export type { LocatedFile, UncheckedFile } from './naming/layout.js';
export { fileFromLocalPath, LOCAL_LAYOUT, resolveLocalPath } from './naming/layout.js';
export type { AncillaryExtension, DataLevel, Instrument, ScienceExtension } from './naming/mission.js';
export {
  ANCILLARY_EXTENSIONS,
  DATA_LEVELS,
  INSTRUMENTS,
  MISSION,
  SCIENCE_EXTENSIONS,
  TODAY_DATA_LEVELS,
  TODAY_INSTRUMENTS,
} from './naming/mission.js';
export { isCalendarDate, MAX_NAME_BYTES } from './naming/name-parts.js';
export type { NameParts } from './naming/names.js';
export {
  formatName,
  nameWarning,
  parseName,
  parsePath,
  parsePathOrName,
  parseScienceName,
} from './naming/names.js';
export type { QueryRecord, SpiceRecord } from './naming/query-records.js';
export type { QueryFilters, QueryTable } from './naming/query-vocabulary.js';
export type { SpiceKernelType } from './naming/spice.js';
export { SPICE_KERNEL_TYPES } from './naming/spice.js';
export { compareVersions, type ParsedVersion, parseVersion, versionRank } from './naming/versions.js';
export type { NewerFormRecord, ReceivedRecord } from './service/records.js';
export type { MatchingDownload, MatchingOptions, MatchingSelection } from './sync/matching.js';
export type { SyncFile, SyncFileStatus, SyncOptions, SyncResult } from './sync/types.js';
export type {
  VerifiedAgainst,
  VerifyEntry,
  VerifyOptions,
  VerifyProgress,
  VerifyReport,
  VerifyStatus,
} from './sync/verify.js';
export type { UploadOptions, UploadPreview, UploadProgress, UploadResult } from './upload/engine.js';
