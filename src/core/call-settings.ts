/**
 * The settings a call is handed, made from the table's values (`settings.ts`), each in the unit its name says:
 * how patiently requests are tried (`RequestSettings`) and how transfers run (`TransferSettings`, sizes in bytes).
 */
import { type Setting, type SettingValue, settingDefault } from './settings.js';

/**
 * How patiently requests and transfers are tried and waited for: resolved once from the settings (and the
 * library's backoff options) and handed down unchanged to the service client and both transfer engines.
 */
export interface RequestSettings {
  /** Attempts after the first that failed, per request or transfer (see `failure-policy.ts`). */
  retries: number;
  /** Allowed to connect, for the first byte of an answer and between two bytes, in ms. */
  timeoutMs: number;
  /** First backoff delay in ms, doubled on every retry (with jitter). */
  retryBaseMs: number;
  /** Longest wait a `Retry-After` header may ask for, in ms. */
  maxRetryAfterMs: number;
  /** Receives one line per request and per retry. */
  log?: ((line: string) => void) | undefined;
}

/** What the library hands a transfer engine besides its caller's options. */
export interface WithRequests {
  /** The request settings the client resolved, as they are (the engine's retries and their backoff). */
  requests: RequestSettings;
}

/** The first backoff delay when none is given, in ms. */
const RETRY_BASE_MS = 1000;
/** The longest `Retry-After` wait when none is given, in ms. */
const MAX_RETRY_AFTER_MS = 30_000;

/** The request settings: those given, the others from the table's defaults. */
export function requestSettings(
  given: { [Key in keyof RequestSettings]?: RequestSettings[Key] | undefined } = {},
): RequestSettings {
  return {
    retries: Math.max(0, Math.floor(given.retries ?? settingDefault('retries'))),
    timeoutMs: given.timeoutMs ?? settingDefault('timeout') * 1000,
    retryBaseMs: Math.max(0, given.retryBaseMs ?? RETRY_BASE_MS),
    maxRetryAfterMs: Math.max(0, given.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS),
    log: given.log,
  };
}

/**
 * How files are transferred: made once from the settings' values (`transferSettings`) and handed down whole to
 * the download and upload engines and to sync. Sizes in bytes: the table's `partSize` is in MiB for people.
 */
export interface TransferSettings {
  /** Files downloaded or uploaded at once (at least 1). */
  concurrency: number;
  /** Connections one large download is fetched over, in parts; `auto`: measured. */
  connections: number | 'auto';
  /** Bytes per part of a large download. */
  partSizeBytes: number;
  /** Fail a download whose store states no checksum to check it against. */
  requireChecksum: boolean;
}

/** A call's own transfer options: each one given wins over the settings handed down. */
export type TransferOverrides = { [Key in keyof TransferSettings]?: TransferSettings[Key] | undefined };

/** What the library hands a transfer engine: the transfer settings the client resolved, whole. */
export interface WithTransfer {
  /** Absent: the table's defaults (an engine called by the library itself, such as verify's repair). */
  transfer?: TransferSettings | undefined;
}

/** The transfer settings' values as the table gives them (the resolved configuration, a command's flags). */
type TransferValues = {
  [Key in 'concurrency' | 'connections' | 'partSize' | 'requireChecksum']?:
    | SettingValue<Extract<Setting, { key: Key }>>
    | undefined;
};

const MIB = 1024 * 1024;

/**
 * The transfer settings given in the table's units, in the library's: the one place the part size turns from
 * MiB into bytes. Those not given stay unset.
 */
export function transferOverrides(values: TransferValues): TransferOverrides {
  return {
    concurrency: values.concurrency,
    connections: values.connections,
    partSizeBytes: values.partSize === undefined ? undefined : values.partSize * MIB,
    requireChecksum: values.requireChecksum,
  };
}

/** `base` (by default the table's defaults) with each override given in its place. */
export function transferFor(
  base: TransferSettings | undefined,
  overrides: TransferOverrides = {},
): TransferSettings {
  const from = base ?? DEFAULT_TRANSFER;
  return {
    concurrency: Math.max(1, Math.floor(overrides.concurrency ?? from.concurrency)),
    connections: overrides.connections ?? from.connections,
    partSizeBytes: overrides.partSizeBytes ?? from.partSizeBytes,
    requireChecksum: overrides.requireChecksum ?? from.requireChecksum,
  };
}

/** The transfer settings of the table's values (a resolved configuration), each left out from its default. */
export function transferSettings(values: TransferValues = {}): TransferSettings {
  return transferFor(undefined, transferOverrides(values));
}

/** The transfer settings of the table's defaults. */
const DEFAULT_TRANSFER = transferOverrides({
  concurrency: settingDefault('concurrency'),
  connections: settingDefault('connections'),
  partSize: settingDefault('partSize'),
  requireChecksum: settingDefault('requireChecksum'),
}) as TransferSettings;
