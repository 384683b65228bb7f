/**
 * The settings, declared once: each one's library and configuration-file name, flag, environment variables,
 * check, default (in its unit), help, and what it acts on. The command line declares its options from this
 * table (each command takes the settings acting on what it does), `config.ts` resolves each setting from it
 * (flag > environment > configuration file > default), the configuration file's schema, `config list` and the
 * README's table are made from it; the request and transfer settings the engines are handed are made from its
 * values in `call-settings.ts`, each in the unit its name says.
 *
 * It imports nothing: the command line reads it at start-up, and `--help` must not load a value checker.
 */

/**
 * Where a setting is declared on the command line, in the order help lists the groups: `service` (where and as
 * whom), `dataRoot`, `requests` (how patiently) are taken before or after a command's name; `transfer` as a block
 * among the command's own options; `checks` each placed by the command.
 */
export type SettingGroup = 'service' | 'dataRoot' | 'requests' | 'transfer' | 'checks';

/**
 * What a setting acts on, in the library's words (the command line says which of its commands do what):
 * `service` which service is asked and as whom, `requests` how patiently, `dataRoot` the local files, `downloads`
 * and `uploads` how files are transferred.
 */
export type SettingTarget = 'service' | 'requests' | 'dataRoot' | 'downloads' | 'uploads';

/** A setting's value that is not right, as messages word it after the value: `must be …`. */
export type ValueProblem = (value: string) => string | undefined;

/** One setting. */
export interface SettingSpec {
  /** The library's and the configuration file's name. */
  key: string;
  /** The command-line flag, with its value placeholder. */
  flag: string;
  /** Environment variables, the first found (and not empty) wins. */
  env: readonly string[];
  /** A few words for what it is: the Environment section of the help and the README's table. */
  title: string;
  /** The flag's help, without the environment variable and default it adds for the client settings. */
  help: string;
  group: SettingGroup;
  /**
   * What is wrong with a value, as the configuration file's check and `config set` word it; `http-url` is an
   * http(s) address, checked by the file's schema as addresses are, and where given by `urls.ts`'s one check.
   */
  problem: ValueProblem | 'http-url';
  /**
   * A value given by flag or environment is checked too, and refused naming who set it (one of the file is
   * checked on reading); otherwise such values are taken as given.
   */
  checkGiven?: boolean;
  /** The value's type and unit for the library (`Config`): the text parsed. */
  parse: (value: string) => unknown;
  /** The default, as it would be written in the file; absent: unset. */
  default?: string;
  /** The unit of the value, where it has one. */
  unit?: string;
  /**
   * How the help names the default: `true`, as `default` writes it; its own words where a user reads it
   * otherwise (`./data`); absent, it names none (or commander's `(default: …)` does).
   */
  helpDefault?: string | true;
  /** The help shows the default as commander does, `(default: 8)` (the transfer options). */
  commanderDefault?: boolean;
  /** Shown masked by `config list`: it authorizes requests. */
  secret?: boolean;
  /** What it acts on: a command takes the setting when it does one of these. */
  actsOn: readonly SettingTarget[];
}

const nonEmpty: ValueProblem = (value) => (value.length >= 1 ? undefined : 'must not be empty');

/** A whole number from `min` to `max`, written plainly. */
const wholeNumber =
  (min: number, max: number, what = ''): ValueProblem =>
  (value) => {
    const number = Number(value);
    return /^\d+$/.test(value) && Number.isSafeInteger(number) && number >= min && number <= max
      ? undefined
      : `must be a whole number${what} from ${min} to ${max}`;
  };

const retriesProblem: ValueProblem = (value) =>
  /^(?:1?\d|20)$/.test(value) ? undefined : 'must be a whole number from 0 to 20';
const timeoutProblem: ValueProblem = (value) =>
  /^[1-9]\d{0,3}$/.test(value) ? undefined : 'must be a whole number of seconds from 1 to 9999';
const concurrencyProblem = wholeNumber(1, 64);
const connectionsProblem: ValueProblem = (value) =>
  value === 'auto' || wholeNumber(1, 64)(value) === undefined
    ? undefined
    : 'must be a whole number from 1 to 64, or auto (measured)';
const partSizeProblem = wholeNumber(1, 1024);
const booleanProblem: ValueProblem = (value) =>
  value === 'true' || value === 'false' ? undefined : 'must be true or false';

/** Every setting, in the order `config list`, its messages and the configuration file list them. */
export const SETTINGS = [
  {
    key: 'url',
    flag: '--url <url>',
    env: ['MISSION_DATA_ACCESS_URL', 'IMAP_DATA_ACCESS_URL'],
    title: 'service address',
    help: 'service address',
    group: 'service',
    problem: 'http-url',
    parse: (value: string): string => value.replace(/\/+$/, ''),
    default: 'https://api.dev.imap-mission.com',
    actsOn: ['service'],
  },
  {
    key: 'apiKey',
    flag: '--api-key <key>',
    env: ['MISSION_API_KEY', 'IMAP_API_KEY'],
    title: 'API key',
    help: 'API key, sent to the service on every request',
    group: 'service',
    problem: nonEmpty,
    parse: (value: string): string => value,
    secret: true,
    actsOn: ['service'],
  },
  {
    key: 'dataDir',
    flag: '--data-dir <dir>',
    env: ['MISSION_DATA_DIR', 'IMAP_DATA_DIR'],
    title: 'local data root',
    help: 'local data root',
    group: 'dataRoot',
    problem: nonEmpty,
    // Made absolute against the working folder by `loadConfig`, which knows it.
    parse: (value: string): string => value,
    default: 'data',
    helpDefault: './data',
    actsOn: ['dataRoot'],
  },
  {
    key: 'token',
    flag: '--token <token>',
    env: ['MISSION_ACCESS_TOKEN', 'IMAP_ACCESS_TOKEN'],
    title: 'bearer token',
    help: 'bearer token for the /authorized/ routes',
    group: 'service',
    problem: (value) =>
      nonEmpty(value) ??
      (/^[\x21-\x7e]+$/.test(value) ? undefined : 'must be printable characters without spaces'),
    parse: (value: string): string => value,
    secret: true,
    actsOn: ['service'],
  },
  {
    key: 'retries',
    flag: '--retries <n>',
    env: ['MISSION_DATA_RETRIES'],
    title: 'retries of a failed request or transfer attempt (0 to 20)',
    help: 'retries of a failed request, or of a transfer attempt that brought no bytes, with backoff',
    group: 'requests',
    problem: retriesProblem,
    checkGiven: true,
    parse: (value: string): number => Number(value),
    default: '3',
    helpDefault: true,
    actsOn: ['requests'],
  },
  {
    key: 'timeout',
    flag: '--timeout <seconds>',
    env: ['MISSION_DATA_TIMEOUT'],
    title: 'seconds allowed to connect and between bytes (1 to 9999)',
    help: 'seconds allowed to connect, for a first byte and between bytes; a stalled run ends within about (retries + 1) x this, plus backoff',
    group: 'requests',
    problem: timeoutProblem,
    checkGiven: true,
    parse: (value: string): number => Number(value),
    default: '30',
    unit: 'seconds',
    helpDefault: true,
    actsOn: ['requests'],
  },
  {
    key: 'concurrency',
    flag: '-c, --concurrency <n>',
    env: ['MISSION_DATA_CONCURRENCY'],
    title: 'files downloaded or uploaded at once (1 to 64)',
    help: 'files downloaded at once',
    group: 'transfer',
    problem: concurrencyProblem,
    checkGiven: true,
    parse: (value: string): number => Number(value),
    default: '8',
    commanderDefault: true,
    actsOn: ['downloads', 'uploads'],
  },
  {
    key: 'connections',
    flag: '--connections <n>',
    env: ['MISSION_DATA_CONNECTIONS'],
    title: 'connections a large file is fetched over (1 to 64, auto)',
    help: 'connections one large file is fetched over, in parts (1: one stream); default auto: measured, from 8 and more while they raise the speed, up to 32',
    group: 'transfer',
    problem: connectionsProblem,
    checkGiven: true,
    parse: (value: string): number | 'auto' => (value === 'auto' ? 'auto' : Number(value)),
    default: 'auto',
    actsOn: ['downloads'],
  },
  {
    key: 'partSize',
    flag: '--part-size <MiB>',
    env: ['MISSION_DATA_PART_SIZE'],
    title: 'part size of a large file, in MiB (1 to 1024)',
    help: 'size of the parts of a large file',
    group: 'transfer',
    problem: partSizeProblem,
    checkGiven: true,
    parse: (value: string): number => Number(value),
    default: '16',
    unit: 'MiB',
    commanderDefault: true,
    actsOn: ['downloads'],
  },
  {
    key: 'requireChecksum',
    flag: '--require-checksum',
    env: ['MISSION_DATA_REQUIRE_CHECKSUM'],
    title: 'fail a file without a stated checksum (true, false)',
    help: 'fail a file the store states no checksum for (otherwise it counts as not verified)',
    group: 'checks',
    problem: booleanProblem,
    checkGiven: true,
    parse: (value: string): boolean => value === 'true',
    default: 'false',
    actsOn: ['downloads'],
  },
] as const satisfies readonly SettingSpec[];

/** One entry of the table, with its own key's types. */
export type Setting = (typeof SETTINGS)[number];

/** A setting's library name. */
export type SettingKey = Setting['key'];

/** A setting a command takes before or after its name: where and as whom, the data root, requests. */
export type ClientSetting = Extract<Setting, { group: 'service' | 'dataRoot' | 'requests' }>;

/** True for a setting taken before or after a command's name (the transfer settings and checks are its own options). */
export function isClientSetting(spec: Pick<SettingSpec, 'group'>): boolean {
  return spec.group !== 'transfer' && spec.group !== 'checks';
}

/** The settings' library names, in the table's order. */
export const SETTING_KEYS: readonly SettingKey[] = SETTINGS.map((setting) => setting.key);

const BY_KEY = new Map<string, SettingSpec>(SETTINGS.map((setting) => [setting.key, setting]));

/** The entry of `key`. */
export function settingSpec(key: SettingKey): SettingSpec {
  return BY_KEY.get(key) as SettingSpec;
}

/** The name users type and read for a setting: its flag without the dashes (`api-key`). */
export function displayName(spec: Pick<SettingSpec, 'flag'>): string {
  return (/--([\w-]+)/.exec(spec.flag)?.[1] ?? spec.flag) as string;
}

/** The message of an `http-url` value that is not one. */
export const HTTP_URL_PROBLEM = 'must be an http:// or https:// URL';

/** A setting's default, parsed: the one place each default is decided. */
export function settingDefault<Key extends SettingKey>(
  key: Key,
): SettingValue<Extract<Setting, { key: Key }>> {
  const spec = settingSpec(key);
  return spec.parse(spec.default as string) as SettingValue<Extract<Setting, { key: Key }>>;
}

/** The resolved value of a setting: undefined only for one without a default. */
export type SettingValue<Entry extends Setting> = Entry extends { default: string }
  ? ReturnType<Entry['parse']>
  : ReturnType<Entry['parse']> | undefined;

/** The default as a user reads it (`./data` for the file's `data`); undefined when the setting has none. */
export function shownDefault(spec: SettingSpec): string | undefined {
  return spec.helpDefault === true || spec.helpDefault === undefined ? spec.default : spec.helpDefault;
}

/** The help of a client setting's flag: its text, then the variable it reads and the default it falls to. */
export function flagHelp(spec: SettingSpec): string {
  if (!isClientSetting(spec)) return spec.help;
  const shown = shownDefault(spec);
  const names = [`env ${spec.env[0]}`, ...(spec.helpDefault && shown ? [`default ${shown}`] : [])];
  return `${spec.help} (${names.join('; ')})`;
}

/** The groups in the order help lists them. */
const GROUP_ORDER: readonly SettingGroup[] = ['service', 'dataRoot', 'requests', 'transfer', 'checks'];

/** The settings in the order help lists their flags and variables: by group, then as the table lists them. */
export const SETTINGS_BY_GROUP: readonly SettingSpec[] = [...SETTINGS].sort(
  (a, b) => GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group),
);
