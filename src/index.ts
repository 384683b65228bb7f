/** The mission-data library: the public names, re-exported. */
export type { CreateClientOptions, MissionDataClient } from './api.js';
export { createClient } from './api.js';
export type { Config, ConfigFlags, LoadConfigOptions, SettingName, SettingSource } from './config.js';
export { DEFAULT_URL, loadConfig } from './config.js';
export type { DownloadOptions, DownloadProgress, DownloadResult } from './download.js';
export {
  AbortedError,
  ApiError,
  ConfigError,
  type ErrorCode,
  ExitCode,
  LocalFileError,
  MissionDataError,
  NetworkError,
  ProtocolError,
  UsageError,
  ValidationError,
} from './errors.js';
export type { ApiAnswer } from './http/envelope.js';
export { fileFromLocalPath, LOCAL_LAYOUT, resolveLocalPath } from './layout.js';
export type { AncillaryExtension, DataLevel, Instrument, ScienceExtension } from './mission.js';
export { ANCILLARY_EXTENSIONS, DATA_LEVELS, INSTRUMENTS, MISSION } from './mission.js';
export { compareVersions, isCalendarDate, MAX_NAME_BYTES } from './name-parts.js';
export type { AncillaryFile, MissionFile, ScienceFile } from './naming.js';
export {
  formatName,
  parseName,
  parsePath,
  parsePathOrName,
  parseScienceName,
} from './naming.js';
export type { OutputFormat } from './output.js';
export { formatCsv, formatJson, formatTable } from './output.js';
export type { QueryFilters, QueryParams, QueryRecord } from './query-vocabulary.js';
export { HttpClient } from './service.js';
export type {
  GetObjectOptions,
  HttpClientOptions,
  HttpQueryOptions,
  ObjectResponse,
  PutObjectOptions,
} from './service-types.js';
export type { UploadOptions, UploadProgress, UploadResult } from './upload.js';
