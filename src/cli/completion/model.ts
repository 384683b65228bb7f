/**
 * The program as completion scripts see it: commands, options and what each value or argument completes to,
 * read from the program's own declarations and the mission's value lists.
 */
import type { Command, Option } from 'commander';
import { SETTING_DISPLAY_NAMES } from '../../core/config.js';
import { ANCILLARY_EXTENSIONS, SCIENCE_EXTENSIONS } from '../../naming/mission.js';
import { QUERY_FILTERS } from '../../naming/query-vocabulary.js';

/** Shells a script can be printed for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
/** A shell a completion script can be printed for. */
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** What an option's value completes to. */
export type ValueKind =
  | { kind: 'none' }
  | { kind: 'words'; words: readonly string[] }
  | { kind: 'directory' }
  | { kind: 'file' }
  | { kind: 'any' };

export interface OptionModel {
  short: string | undefined;
  long: string;
  description: string;
  value: ValueKind;
}

/** One command (or `config` subcommand) as the scripts see it. */
export interface CommandModel {
  /** `query`, or `config get` for a subcommand. */
  path: string;
  name: string;
  description: string;
  options: OptionModel[];
  /** What its positional arguments complete to. */
  positional: { kind: 'none' } | { kind: 'files' } | { kind: 'words'; words: readonly string[] };
  subcommands: CommandModel[];
}

/** Values of the filters the parser leaves to the library's checks (and so declares no choices for). */
const FILTER_VALUES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ...QUERY_FILTERS.flatMap(
    (filter): Array<[string, readonly string[]]> =>
      'choices' in filter ? [[filter.flag.split(' ')[0] as string, filter.choices]] : [],
  ),
  ['--extension', [...new Set<string>([...SCIENCE_EXTENSIONS, ...ANCILLARY_EXTENSIONS])]],
]);

/** Options whose value is a folder. */
const DIRECTORY_OPTIONS = new Set(['--data-dir', '--store']);

function optionModel(option: Option): OptionModel {
  const long = option.long ?? option.short ?? option.flags;
  const takesValue = option.required || option.optional;
  const words = option.argChoices ?? FILTER_VALUES.get(long);
  const value: ValueKind = !takesValue
    ? { kind: 'none' }
    : words
      ? { kind: 'words', words }
      : DIRECTORY_OPTIONS.has(long)
        ? { kind: 'directory' }
        : option.flags.endsWith('<file>')
          ? { kind: 'file' }
          : { kind: 'any' };
  return { short: option.short, long, description: option.description, value };
}

function commandModel(command: Command, parent: string | undefined): CommandModel {
  const path = parent ? `${parent} ${command.name()}` : command.name();
  const options = [...command.options.map(optionModel), helpOption()];
  const argument = command.registeredArguments[0];
  const positional: CommandModel['positional'] = !argument
    ? { kind: 'none' }
    : argument.argChoices
      ? { kind: 'words', words: argument.argChoices }
      : argument.name() === 'key'
        ? { kind: 'words', words: Object.values(SETTING_DISPLAY_NAMES) }
        : argument.name() === 'paths'
          ? { kind: 'files' }
          : { kind: 'none' };
  return {
    path,
    name: command.name(),
    description: command.description(),
    options,
    positional,
    subcommands: command.commands.map((sub) => commandModel(sub, path)),
  };
}

function helpOption(): OptionModel {
  return { short: '-h', long: '--help', description: 'show help', value: { kind: 'none' } };
}

/** Every command of `program`, subcommands included, as the scripts see them. */
export function programModel(program: Command): CommandModel[] {
  return program.commands.map((command) => commandModel(command, undefined));
}

export function flagsOf(options: readonly OptionModel[]): string[] {
  return options.flatMap((option) => (option.short ? [option.short, option.long] : [option.long]));
}

/** Single-quoted for every shell here (none of them expands inside single quotes). */
export function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
