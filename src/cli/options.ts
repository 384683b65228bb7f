/**
 * The command line's options, declared once: the settings' options (and which commands take them, from what
 * each does and what each setting acts on), the query filters (from the one table of filters), the value parsers, and each command's examples.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../core/errors.js';
import {
  displayName,
  flagHelp,
  isClientSetting,
  SETTINGS,
  SETTINGS_BY_GROUP,
  type SettingKey,
  type SettingSpec,
  type SettingTarget,
} from '../core/settings.js';
import { didYouMean } from '../naming/did-you-mean.js';
import { filterTables, hasFilter } from '../naming/query-params.js';
import {
  FILTER_NAMES,
  type FilterName,
  type FilterSpec,
  QUERY_FILTERS,
  type QueryFilters,
} from '../naming/query-vocabulary.js';

/** Options whose default is there for their help only (see `dropHelpDefaults`). */
const HELP_ONLY_DEFAULTS = new WeakSet<Option>();

/** The option of a setting of the table, its help and (for the transfer options) its check from there. */
export function settingOption(spec: SettingSpec, help = flagHelp(spec)): Option {
  const option = new Option(spec.flag, help);
  const problem = spec.problem;
  // The client settings' values are checked with the configuration, which says where they came from.
  if (spec.group !== 'transfer' || typeof problem !== 'function') return option;
  option.argParser((value: string) => {
    const found = problem(value);
    if (found !== undefined) throw new InvalidArgumentError(`${option.long} ${found}.`);
    return spec.parse(value);
  });
  // Shown in the help only: the value a command receives stays unset unless given, so that the environment
  // and the configuration file still apply (see `dropHelpDefaults`).
  if (spec.commanderDefault && spec.default !== undefined) {
    option.default(spec.parse(spec.default));
    HELP_ONLY_DEFAULTS.add(option);
  }
  return option;
}

/** Options shared by every client command, declared once: the settings of the table's client groups. */
export const GLOBAL_OPTIONS: ReadonlyArray<() => Option> = [
  ...SETTINGS_BY_GROUP.filter(isClientSetting).map((spec) => () => settingOption(spec)),
  () => new Option('-q, --quiet', 'print only results and errors'),
  () => new Option('--debug', 'print stack traces and request details'),
];

/**
 * What each client command does, in the settings table's words: a command takes the settings that act on one of
 * these (help shows an option only where it does something: `query` writes no file, so the data root means
 * nothing to it). `config list` and `get` show the values the client commands would use; `set` and `unset` take
 * the service and the data root as `list` does, and need no request settings: they ask nothing.
 */
export const COMMAND_TARGETS: Readonly<Record<string, readonly SettingTarget[]>> = {
  query: ['service', 'requests'],
  download: ['service', 'requests', 'dataRoot', 'downloads'],
  sync: ['service', 'requests', 'dataRoot', 'downloads'],
  upload: ['service', 'requests', 'dataRoot', 'uploads'],
  coverage: ['service', 'requests', 'dataRoot'],
  status: ['service', 'requests', 'dataRoot'],
  // Its repair downloads with the checksum always required, and the client's transfer settings otherwise.
  verify: ['service', 'requests', 'dataRoot'],
  list: ['service', 'requests', 'dataRoot'],
  get: ['service', 'requests', 'dataRoot'],
  set: ['service', 'dataRoot'],
  unset: ['service', 'dataRoot'],
};

/** True when `spec` acts on something `command` does. */
export function takesSetting(command: string, spec: Pick<SettingSpec, 'actsOn'>): boolean {
  const targets = COMMAND_TARGETS[command];
  if (targets === undefined)
    throw new Error(`The client command ${command} has no entry in COMMAND_TARGETS.`);
  return spec.actsOn.some((target) => targets.includes(target));
}

/** The setting of each global option (none for `--quiet`, `--debug`), found once: each command asks for its own. */
let globalSpecs: ReadonlyMap<() => Option, SettingSpec | undefined> | undefined;

/** The global options of one client command (or `config` subcommand): those acting on what it does. */
export function globalOptionsFor(command: string): ReadonlyArray<() => Option> {
  globalSpecs ??= new Map(
    GLOBAL_OPTIONS.map((make) => {
      const long = make().long;
      return [make, SETTINGS.find((spec: SettingSpec) => `--${displayName(spec)}` === long)];
    }),
  );
  const specs = globalSpecs;
  return GLOBAL_OPTIONS.filter((make) => {
    const spec = specs.get(make);
    return spec === undefined || takesSetting(command, spec);
  });
}

/**
 * Unsets each option that holds only the default its help shows: the command then leaves the setting to the
 * environment, the configuration file or the table's default, in that order.
 */
export function dropHelpDefaults(command: Command): void {
  for (const option of command.options) {
    const key = option.attributeName();
    if (HELP_ONLY_DEFAULTS.has(option) && command.getOptionValueSource(key) === 'default') {
      command.setOptionValueWithSource(key, undefined, 'default');
    }
  }
}

/**
 * A fixed list of values, checked by the parser with a did-you-mean: `--output-format jsn` is answered
 * "Allowed choices are table, json, csv. Did you mean json?" (commander's own check suggests nothing).
 */
export function withChoices(option: Option, choices: readonly string[], plural: string): Option {
  return option.choices(choices).argParser((value: string) => {
    if (choices.includes(value)) return value;
    const suggestion = didYouMean(value, choices, plural);
    throw new InvalidArgumentError(
      `Allowed choices are ${choices.join(', ')}.${suggestion ? ` ${suggestion}` : ''}`,
    );
  });
}

/**
 * Query filters, shared by `query` and `download`, declared from the one table of filters. A filter takes one
 * value: given twice with two values it is refused (commander would keep the last without a word); the same
 * value twice is harmless.
 */
export const FILTER_OPTIONS: ReadonlyArray<() => Option> = QUERY_FILTERS.map((filter) => () => {
  const option = new Option(filter.flag, filter.help);
  // Only the table's values are few and fixed enough to be refused by the parser; the others are checked
  // with the service's own messages.
  const check =
    filter.name === 'table'
      ? (withChoices(new Option(filter.flag), filter.choices, 'tables').parseArg as (value: string) => string)
      : (value: string) => value;
  if (filter.name === 'table') option.choices(filter.choices);
  return option.argParser((value: string, previous: string | undefined) => {
    if (previous !== undefined && previous !== value) {
      throw new InvalidArgumentError(
        `${filterFlag(filter.name)} is given twice (${previous}, then ${value}): a filter takes one value; run one query per value.`,
      );
    }
    return check(value);
  });
});

/**
 * The query filters of a command that compares files by name (`status`, `verify`): the ingestion days stay
 * declared, so that `refuseIngestionFilters` says why they do not apply, but are left out of the help.
 */
export const NAME_FILTER_OPTIONS: ReadonlyArray<() => Option> = QUERY_FILTERS.map((filter, at) => () => {
  const option = (FILTER_OPTIONS[at] as () => Option)();
  return filter.name === 'ingestionStartDate' || filter.name === 'ingestionEndDate'
    ? option.hideHelp()
    : option;
});

/**
 * A hint for a selection that matched nothing when a filter the archive writes in lower case was given in
 * another (`--descriptor NORM`): the service compares as written, so it matched nothing rather than failing.
 */
export function caseHint(filters: QueryFilters): string | undefined {
  const descriptor = filters.descriptor;
  if (descriptor === undefined || descriptor === descriptor.toLowerCase()) return undefined;
  return `Descriptors are written in lower case in file names: did you mean --descriptor ${descriptor.toLowerCase()}?`;
}

/** A parser of a whole number from 1 to `max`, for the option `name`. */
export function positiveInteger(name: string, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1 || number > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}.`);
    }
    return number;
  };
}

/** Units of a DURATION, in seconds. */
const DURATION_UNITS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600 };

/** Parses a DURATION (`30s`, `10m`, `1h`, or plain seconds; at least 1 s) into milliseconds. */
export function duration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  const seconds = match ? Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? 1) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 7 * 24 * 3600) {
    throw new InvalidArgumentError(
      'give a duration of at least 1 second: 30s, 10m, 1h, or plain seconds (at most a week).',
    );
  }
  return Math.round(seconds * 1000);
}

/** Parses a port number (0 picks a free one). */
export function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65535)
    throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  return number;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds the options to a command. */
export function withOptions(command: Command, options: ReadonlyArray<() => Option>): Command {
  for (const option of options) command.addOption(option());
  return command;
}

/**
 * A command's own options of the settings of `group` (`transfer`: how files are transferred; `checks`) that act
 * on what it does, in the table's order; `help` words one for the command (`files uploaded at once`).
 */
export function settingOptionsFor(
  command: string,
  group: 'transfer' | 'checks',
  help: Partial<Record<SettingKey, string>> = {},
): ReadonlyArray<() => Option> {
  return SETTINGS_BY_GROUP.filter((spec) => spec.group === group && takesSetting(command, spec)).map(
    (spec) => () => settingOption(spec, help[spec.key as SettingKey]),
  );
}

/** The settings' names as users type them, `url, api-key, …` and `last` before the last one. */
export function settingNames(last: string): string {
  const names = SETTINGS.map(displayName);
  return `${names.slice(0, -1).join(', ')}${last}${names.at(-1)}`;
}

/**
 * Output formats of `query`, declared here rather than beside their renderers (`output.ts`): the declaration
 * offers them at start-up, and the renderers load only when a query prints.
 */
export const OUTPUT_FORMATS = ['table', 'json', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The command-line flag of a filter, e.g. `--data-level`. */
export function filterFlag(name: FilterName): string {
  return (QUERY_FILTERS.find((filter) => filter.name === name)?.flag ?? name).split(' ')[0] as string;
}

/**
 * Refuses the ingestion-day filters for a command that compares files by name (`status`, `coverage`,
 * `download --only-missing/--update`), naming the flags given: a name carries no ingestion day.
 */
export function refuseIngestionFilters(filters: QueryFilters, command: string): void {
  const given = (['ingestionStartDate', 'ingestionEndDate'] as const).filter(
    (name) => filters[name] !== undefined && filters[name] !== '',
  );
  if (given.length > 0) {
    throw new UsageError(
      `${command} compares files by name, and a name carries no ingestion day: leave out ${given.map(filterFlag).join(' and ')}.`,
    );
  }
}

/**
 * Refuses the filters given that do not apply to the table searched (`--instrument` with `--table spice`,
 * `--type` without it), naming each flag and the tables it filters: a usage error (exit 2), before any request.
 */
export function refuseFiltersOfOtherTables(filters: QueryFilters): void {
  const table = filters.table ?? 'science';
  const wrong = (QUERY_FILTERS as readonly FilterSpec[]).filter(
    (filter) =>
      filter.name !== 'table' &&
      filters[filter.name] !== undefined &&
      filters[filter.name] !== '' &&
      !filterTables(filter).includes(table),
  );
  if (wrong.length === 0) return;
  const lines = wrong.map((filter) => {
    const tables = filterTables(filter);
    return `${filterFlag(filter.name)} does not apply to --table ${table}: it filters the ${tables.join(' and ')} table${tables.length === 1 ? '' : 's'}.`;
  });
  const spiceOnly = wrong.every((filter) => filterTables(filter).includes('spice'));
  throw new UsageError(lines.join('\n'), {
    hint:
      table !== 'spice' && spiceOnly
        ? 'SPICE kernels are searched with --table spice, e.g. mission-data query --table spice --type leapseconds'
        : undefined,
  });
}

/**
 * The key commander stores a filter's value under: its flag in camel case (`--data-level` → `dataLevel`), which
 * is the filter's name except where the flag is the service's word (`--type` for `kernelType`).
 */
export function filterAttribute(name: FilterName): string {
  return filterFlag(name)
    .slice(2)
    .replace(/-([a-z])/g, (_dash, letter: string) => letter.toUpperCase());
}

/**
 * The filters actually given (set and non-empty), by their library names, ignoring every other option commander
 * hands over; a caller's object of library names (`kernelType`) is read as well.
 */
export function pickFilters(options: object): QueryFilters {
  const picked: Record<string, string> = {};
  const given = options as Record<string, unknown>;
  for (const name of FILTER_NAMES) {
    const value = given[filterAttribute(name)] ?? given[name];
    if (typeof value === 'string' && value !== '') picked[name] = value;
  }
  return picked as QueryFilters;
}

/**
 * The filters of a command that needs at least one (`query`, `status`, `coverage`, `download --only-missing/--update`): a usage error when none is given,
 * `example` being the flags the hint shows.
 */
export function requiredFilters(options: object, example: string): QueryFilters {
  const filters = pickFilters(options);
  if (!hasFilter(filters)) {
    throw new UsageError(
      `Give at least one filter: ${FILTER_NAMES.filter((name) => name !== 'table')
        .map(filterFlag)
        .join(', ')}.`,
      { hint: `For example: mission-data ${example}` },
    );
  }
  return filters;
}
