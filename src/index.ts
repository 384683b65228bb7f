/** The mission-data library: the public names, re-exported. */
export type { Config, ConfigFlags, LoadConfigOptions, SettingName, SettingSource } from './config.js';
export { DEFAULT_URL, loadConfig } from './config.js';
export {
  AbortedError,
  ApiError,
  ConfigError,
  ExitCode,
  LocalFileError,
  MissionDataError,
  NetworkError,
  ProtocolError,
  UsageError,
  ValidationError,
} from './errors.js';
export { fileFromLocalPath, LOCAL_LAYOUT, resolveLocalPath } from './layout.js';
export type { AncillaryExtension, DataLevel, Instrument, ScienceExtension } from './mission.js';
export { ANCILLARY_EXTENSIONS, DATA_LEVELS, INSTRUMENTS, MISSION } from './mission.js';
export type { AncillaryFile, MissionFile, ScienceFile } from './naming.js';
export {
  compareVersions,
  formatName,
  isCalendarDate,
  parseName,
  parsePath,
  parsePathOrName,
  parseScienceName,
} from './naming.js';
