/**
 * The server's backends, each registered with its settings: object stores picked by the form of `--store` (a
 * scheme, or a plain path for the folder), indexes by the scheme of `--index` (the memory index without one).
 * The command line makes its flags from these declarations and hands their values back as they are; the server
 * decides here, once, which backend a location names. Light by design: `serve`'s declaration loads it with every
 * run, and each backend loads its implementation only when it is opened.
 */
import { StoreError, UsageError } from '../core/errors.js';
import {
  attributeOf,
  type BackendSetting,
  flagOf,
  type IndexBackend,
  type StoreBackend,
} from './backend-types.js';
import { memoryIndexBackend } from './metadata/memory-backend.js';
import { postgresIndexBackend } from './metadata/postgres-backend.js';
import { folderBackend } from './objects/folder-backend.js';
import { type S3Settings, s3Backend } from './objects/s3-backend.js';

/** The object stores, the folder (plain paths) first; one per scheme. */
const STORE_BACKENDS: readonly StoreBackend[] = [folderBackend, s3Backend];

/** The indexes, the default (no location) first. */
const INDEX_BACKENDS: readonly IndexBackend[] = [memoryIndexBackend, postgresIndexBackend];

/** The settings of every registered store, as `startReferenceServer` takes them. */
export type StoreSettings = S3Settings;

/** The stores' settings and where the index is. */
export type BackendSettings = StoreSettings & { indexUrl?: string | undefined };

/** Where the index is: `--index`, or MISSION_DATA_INDEX_URL. */
export const INDEX_SETTING: BackendSetting = {
  key: 'indexUrl',
  flag: '--index',
  value: '<url>',
  help: 'PostgreSQL index: postgres://USER:PASS@HOST:PORT/DB (default: in memory)',
  env: 'MISSION_DATA_INDEX_URL',
};

/**
 * The scheme a `--store` location starts with (`s3` of `s3://b`), lower case; undefined for a folder. A single
 * letter is a Windows drive (`C:\archive`), not a scheme.
 */
export function storeScheme(location: string): string | undefined {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(location);
  return match?.[1] && match[1].length > 1 ? match[1].toLowerCase() : undefined;
}

/** The forms `--store` takes, for messages: a folder, then each backend's. */
function knownStores(): string {
  return STORE_BACKENDS.map((backend) => backend.form).join(', ');
}

/**
 * The backend a `--store` location names: the folder's for a plain path. A scheme no backend has, or a location
 * not of its backend's form, is refused (UsageError) naming the forms that are known.
 */
export function storeBackendFor(location: string): StoreBackend {
  const scheme = storeScheme(location);
  const backend = STORE_BACKENDS.find((each) => each.scheme === scheme);
  if (backend?.accepts(location)) return backend;
  const what = backend ? `is not of the form ${backend.form}` : `names no known kind of store (${scheme}:)`;
  throw new UsageError(`--store ${JSON.stringify(location)} ${what}; give one of: ${knownStores()}.`);
}

/** The backend a `--store` location names by its scheme; undefined for a folder (see `storeBackendFor`). */
export function storeBackendOf(location: string): StoreBackend | undefined {
  const backend = storeBackendFor(location);
  return backend.scheme === undefined ? undefined : backend;
}

/** The index an `--index` location names: the default without one; refused (StoreError) when none takes it. */
export function indexBackendFor(location: string | undefined): IndexBackend {
  const [byDefault, ...named] = INDEX_BACKENDS;
  if (!location && byDefault) return byDefault;
  const scheme = storeScheme(location ?? '');
  const backend = named.find((each) => scheme !== undefined && each.schemes.includes(scheme));
  if (location && backend?.accepts(location)) return backend;
  throw new StoreError(`The index must be a ${named.map((each) => each.what).join(' or ')}.`, {
    hint: `Give ${flagOf(INDEX_SETTING)} ${named.map((each) => each.form).join(' or ')} (or ${INDEX_SETTING.env}).`,
  });
}

/** The help of `--store`: a folder, or each backend's kind and form. */
export function storeHelp(): { value: string; help: string } {
  const named = STORE_BACKENDS.filter((backend) => backend.scheme !== undefined);
  return {
    value: `<dir|${named.map((backend) => `${backend.scheme}-url`).join('|')}>`,
    help: `folder holding the stored objects, or ${named.map((backend) => `${backend.what}: ${backend.form}`).join(', or ')}`,
  };
}

/** The settings the command line offers as flags, each with its flag, in the order of the backends, the index's last. */
export function commandLineSettings(): readonly (BackendSetting & { flag: string })[] {
  const stores = STORE_BACKENDS.flatMap((backend) => backend.settings);
  return [...stores, INDEX_SETTING]
    .filter((setting) => setting.cli !== false)
    .map((setting) => ({ ...setting, flag: flagOf(setting) }));
}

/**
 * The backends' settings from the options the command line parsed (by commander's names for their flags): each
 * setting's flag or variable, else its fallback's.
 */
export function settingsFromFlags(parsed: Readonly<Record<string, unknown>>): BackendSettings {
  const settings: Record<string, unknown> = {};
  for (const setting of commandLineSettings()) {
    const value =
      parsed[attributeOf(setting.flag)] ??
      (setting.fallback ? parsed[attributeOf(setting.fallback.flag)] : undefined);
    if (value !== undefined) settings[setting.key] = value;
  }
  // Commander gives each flag's value as the declaration's parser made it: a string for every backend's.
  return settings as BackendSettings;
}
