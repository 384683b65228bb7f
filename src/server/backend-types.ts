/**
 * What a backend of the server declares when it registers: the locations it takes, its own settings (from which
 * the command line makes its flags and environment names) and how it is opened. Declarations are light: a
 * backend loads its implementation (the AWS SDK, `pg`) in `open`, only when it is asked for.
 */
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore } from './objects/object-store.js';
import type { UrlSigner } from './objects/presign.js';

/**
 * A setting of a backend, by its name among the server's options (`s3Endpoint`). Its flag is that name in
 * kebab case (`--s3-endpoint`) unless it names its own; `cli: false` keeps it to the library (credentials).
 */
export interface BackendSetting {
  /** The option of `startReferenceServer`, in camel case, led by the backend's scheme (`s3Region`). */
  readonly key: string;
  /** The flag when it is not the key's kebab case (`--index`). */
  readonly flag?: string;
  /** What the flag's value is, as help shows it (`<url>`). */
  readonly value?: string;
  /** The line of `serve --help`; none for a flag kept out of help. */
  readonly help?: string;
  /** The environment variable the flag falls back to. */
  readonly env?: string;
  /** A flag of another name (and its own variable) read when neither this flag nor its variable is given. */
  readonly fallback?: { readonly flag: string; readonly env: string };
  /** False for a setting only the library takes. */
  readonly cli?: boolean;
}

/** What every store is opened with, beside its own settings: the server's own options. */
export interface StoreOpening {
  /** An upload that sends no body bytes for this long is given up. */
  uploadIdleTimeoutMs?: number | undefined;
  /** The secret the server signs its own URLs with. */
  secret?: string | undefined;
}

/** An opened store, and the signer of its URLs when the server signs them (undefined when the store does). */
export interface OpenedStore {
  store: ObjectStore;
  signer: UrlSigner | undefined;
}

/** A kind of object store, picked by the form of a `--store` location. */
export interface StoreBackend {
  /** The scheme its locations start with, lower case without `:` (`s3`); undefined for the folder's plain paths. */
  readonly scheme: string | undefined;
  /** What it is, then the form of its locations, for help and messages (`an S3 bucket`, `s3://BUCKET[/PREFIX]`). */
  readonly what: string;
  readonly form: string;
  /** True when `location` has the backend's form. */
  accepts(location: string): boolean;
  /** The store's folder on this machine, its path resolved; undefined for a store elsewhere. */
  localFolder?(location: string): string;
  readonly settings: readonly BackendSetting[];
  /** Opens the store, checked to answer; `settings` holds the server's options by their keys. */
  open(
    location: string,
    settings: Readonly<Record<string, unknown>>,
    opening: StoreOpening,
  ): Promise<OpenedStore>;
}

/** A kind of metadata index, picked by the scheme of `--index`; the default one takes no location. */
export interface IndexBackend {
  /** The schemes of its URLs (`postgres`, `postgresql`); none for the default, which needs no location. */
  readonly schemes: readonly string[];
  /** What its locations are and their form, for messages (`PostgreSQL URL`, `postgres://USER:PASS@HOST:PORT/DB`). */
  readonly what: string;
  readonly form: string;
  /** True when `location` has the backend's form. */
  accepts(location: string): boolean;
  /** Opens the index; the default one starts from what the opened store lists. */
  open(location: string | undefined, store: ObjectStore): Promise<MetadataIndex>;
}

/** The flag of a setting: its own, or its key in kebab case (`s3Endpoint` -> `--s3-endpoint`). */
export function flagOf(setting: Pick<BackendSetting, 'key' | 'flag'>): string {
  return setting.flag ?? `--${setting.key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** The name a flag's value goes by among parsed options, as commander names it (`--aws-endpoint` -> `awsEndpoint`). */
export function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}
