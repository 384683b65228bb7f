/**
 * `mission-data completion bash|zsh|fish`: prints a shell completion script. The script is written from the
 * program's own declarations (commands, options, their fixed choices) and the mission's value lists, so it
 * never lags behind them; it holds every list itself, so completing never starts Node.
 */
import type { Command, Option } from 'commander';
import { SETTING_DISPLAY_NAMES } from '../../core/config.js';
import { ANCILLARY_EXTENSIONS, SCIENCE_EXTENSIONS } from '../../naming/mission.js';
import { QUERY_FILTERS } from '../../naming/query-vocabulary.js';
import type { CommandIO } from '../io.js';

/** Shells a script can be printed for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** What an option's value completes to. */
type ValueKind =
  | { kind: 'none' }
  | { kind: 'words'; words: readonly string[] }
  | { kind: 'directory' }
  | { kind: 'any' };

interface OptionModel {
  short: string | undefined;
  long: string;
  description: string;
  value: ValueKind;
}

/** One command (or `config` subcommand) as the scripts see it. */
interface CommandModel {
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
function programModel(program: Command): CommandModel[] {
  return program.commands.map((command) => commandModel(command, undefined));
}

function flagsOf(options: readonly OptionModel[]): string[] {
  return options.flatMap((option) => (option.short ? [option.short, option.long] : [option.long]));
}

/** Single-quoted for every shell here (none of them expands inside single quotes). */
function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** What bash does with an option's value: offer words or folders, or leave it to the user. */
function bashValueBody(value: ValueKind): string | undefined {
  if (value.kind === 'words')
    return `COMPREPLY=($(compgen -W ${quote(value.words.join(' '))} -- "$cur")); return 0;;`;
  if (value.kind === 'directory') return 'COMPREPLY=($(compgen -d -- "$cur")); return 0;;';
  return value.kind === 'any' ? 'return 0;;' : undefined;
}

function bashScript(commands: readonly CommandModel[], bin: string): string {
  const all = commands.flatMap((command) => [command, ...command.subcommands]);
  // An option's value completes alike in every command that has it, unless commands differ (each has its own
  // `--output-format` choices): such a flag gets a case per command, matched on "<command> <flag>".
  const uses = new Map<string, Array<{ path: string; flags: string[]; body: string }>>();
  for (const command of all) {
    for (const option of command.options) {
      const body = bashValueBody(option.value);
      const flags = [option.short, option.long].filter((flag): flag is string => Boolean(flag));
      if (body)
        uses.set(option.long, [...(uses.get(option.long) ?? []), { path: command.path, flags, body }]);
    }
  }
  const same = [...uses.values()].filter((list) => list.every((use) => use.body === list[0]?.body));
  const valueCases = same.map((list) => `      ${list[0]?.flags.join('|')}) ${list[0]?.body}`);
  const commandValueCases = [...uses.values()]
    .filter((list) => !same.includes(list))
    .flatMap((list) =>
      list.map(
        (use) => `      ${use.flags.map((flag) => quote(`${use.path} ${flag}`)).join('|')}) ${use.body}`,
      ),
    );
  const optionCases = all.map(
    (command) => `      ${quote(command.path)}) words=${quote(flagsOf(command.options).join(' '))};;`,
  );
  const positionalCases = all.flatMap((command) => {
    if (command.subcommands.length > 0) {
      return [
        `      ${quote(command.path)}) COMPREPLY=($(compgen -W ${quote(command.subcommands.map((sub) => sub.name).join(' '))} -- "$cur"));;`,
      ];
    }
    if (command.positional.kind === 'words') {
      return [
        `      ${quote(command.path)}) [[ $args -eq 0 ]] && COMPREPLY=($(compgen -W ${quote(command.positional.words.join(' '))} -- "$cur"));;`,
      ];
    }
    if (command.positional.kind === 'files') {
      return [`      ${quote(command.path)}) COMPREPLY=($(compgen -f -- "$cur"));;`];
    }
    return [];
  });
  const parents = commands.filter((command) => command.subcommands.length > 0).map((command) => command.name);
  const name = `_${bin.replaceAll('-', '_')}`;
  return `# bash completion for ${bin}: source it, e.g. from ~/.bashrc:
#   source <(${bin} completion bash)
${name}() {
  local cur prev path word words args i
  COMPREPLY=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  args=0
  # The command (and subcommand) are the first words that are neither options nor option values.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in
      -*) ;;
      *)
        if [[ -z $path ]]; then
          path="$word"
        elif [[ ${quote(`|${parents.join('|')}|`)} == *"|$path|"* ]]; then
          path="$path $word"
        elif [[ \${COMP_WORDS[i-1]} != -* ]]; then
          args=$((args + 1))
        fi
        ;;
    esac
  done
  if [[ -n $path ]]; then
    case "$path $prev" in
${commandValueCases.join('\n')}
    esac
    case "$prev" in
${valueCases.join('\n')}
    esac
  fi
  if [[ -z $path ]]; then
    COMPREPLY=($(compgen -W ${quote(['-h', '--help', '-V', '--version', ...commands.map((command) => command.name)].join(' '))} -- "$cur"))
    return 0
  fi
  if [[ $cur == -* ]]; then
    case "$path" in
${optionCases.join('\n')}
      *) words="";;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return 0
  fi
  case "$path" in
${positionalCases.join('\n')}
  esac
  return 0
}
complete -o bashdefault -o default -F ${name} ${bin}
`;
}

/** A description inside zsh's `[...]`, where brackets and colons end the text early. */
function zshText(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('[', '(').replaceAll(']', ')').replaceAll(':', '\\:');
}

function zshOptionSpecs(options: readonly OptionModel[]): string[] {
  return options.flatMap((option) => {
    const action =
      option.value.kind === 'words'
        ? `:value:(${option.value.words.join(' ')})`
        : option.value.kind === 'directory'
          ? ':folder:_files -/'
          : option.value.kind === 'any'
            ? ':value: '
            : '';
    const suffix = option.value.kind === 'none' ? '' : '=';
    return [option.short, option.long]
      .filter((flag): flag is string => flag !== undefined)
      .map((flag) =>
        quote(`${flag}${flag.startsWith('--') ? suffix : ''}[${zshText(option.description)}]${action}`),
      );
  });
}

function zshPositional(command: CommandModel): string[] {
  if (command.positional.kind === 'words') return [quote(`1:value:(${command.positional.words.join(' ')})`)];
  if (command.positional.kind === 'files') return [quote('*:file:_files')];
  return [];
}

function zshDescribe(commands: readonly CommandModel[], label: string): string[] {
  return [
    `    local -a choices=(${commands.map((command) => quote(`${command.name}:${zshText(command.description)}`)).join(' ')})`,
    `    _describe ${quote(label)} choices`,
  ];
}

function zshScript(commands: readonly CommandModel[], bin: string): string {
  const name = `_${bin.replaceAll('-', '_')}`;
  const cases = commands.map((command) => {
    if (command.subcommands.length === 0) {
      return `    ${command.name})\n      _arguments -s ${[...zshOptionSpecs(command.options), ...zshPositional(command)].join(' ')}\n      ;;`;
    }
    const subcases = command.subcommands.map(
      (sub) =>
        `        ${sub.name})\n          _arguments -s ${[...zshOptionSpecs(sub.options), ...zshPositional(sub)].join(' ')}\n          ;;`,
    );
    return `    ${command.name})
      if (( CURRENT == 2 )); then
${zshDescribe(command.subcommands, 'subcommand')
  .map((line) => `    ${line}`)
  .join('\n')}
        return
      fi
      shift words
      (( CURRENT-- ))
      case $words[1] in
${subcases.join('\n')}
      esac
      ;;`;
  });
  return `#compdef ${bin}
# zsh completion for ${bin}: save it as _${bin} in a folder of $fpath, e.g.
#   ${bin} completion zsh > ~/.zsh/completions/_${bin}   (with fpath=(~/.zsh/completions $fpath) before compinit)
${name}() {
  if (( CURRENT == 2 )); then
${zshDescribe(commands, 'command').join('\n')}
    return
  fi
  shift words
  (( CURRENT-- ))
  case $words[1] in
${cases.join('\n')}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  ${name} "$@"
else
  compdef ${name} ${bin}
fi
`;
}

function fishScript(commands: readonly CommandModel[], bin: string): string {
  const lines = [
    `# fish completion for ${bin}: save it as ~/.config/fish/completions/${bin}.fish, e.g.`,
    `#   ${bin} completion fish > ~/.config/fish/completions/${bin}.fish`,
    `complete -c ${bin} -f`,
    `complete -c ${bin} -n __fish_use_subcommand -s h -l help -d 'show help'`,
    `complete -c ${bin} -n __fish_use_subcommand -s V -l version -d 'print the version'`,
  ];
  const optionLines = (condition: string, options: readonly OptionModel[]) =>
    options.map((option) => {
      const flags = [option.short ? `-s ${option.short.slice(1)}` : '', `-l ${option.long.slice(2)}`]
        .filter(Boolean)
        .join(' ');
      const value =
        option.value.kind === 'words'
          ? ` -x -a ${quote(option.value.words.join(' '))}`
          : option.value.kind === 'directory'
            ? ` -r -F`
            : option.value.kind === 'any'
              ? ' -x'
              : '';
      return `complete -c ${bin} -n ${quote(condition)} ${flags}${value} -d ${quote(option.description)}`;
    });
  const positionalLine = (condition: string, command: CommandModel) =>
    command.positional.kind === 'words'
      ? [`complete -c ${bin} -n ${quote(condition)} -x -a ${quote(command.positional.words.join(' '))}`]
      : command.positional.kind === 'files'
        ? [`complete -c ${bin} -n ${quote(condition)} -F`]
        : [];
  for (const command of commands) {
    lines.push(
      `complete -c ${bin} -n __fish_use_subcommand -a ${command.name} -d ${quote(command.description)}`,
    );
    const seen = `__fish_seen_subcommand_from ${command.name}`;
    if (command.subcommands.length === 0) {
      lines.push(...optionLines(seen, command.options), ...positionalLine(seen, command));
      continue;
    }
    const names = command.subcommands.map((sub) => sub.name).join(' ');
    for (const sub of command.subcommands) {
      lines.push(
        `complete -c ${bin} -n ${quote(`${seen}; and not __fish_seen_subcommand_from ${names}`)} -a ${sub.name} -d ${quote(sub.description)}`,
      );
      const inSub = `${seen}; and __fish_seen_subcommand_from ${sub.name}`;
      lines.push(...optionLines(inSub, sub.options), ...positionalLine(inSub, sub));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script of `program` for `shell`. */
export function completionScript(program: Command, shell: CompletionShell): string {
  const commands = programModel(program);
  const bin = program.name();
  if (shell === 'bash') return bashScript(commands, bin);
  if (shell === 'zsh') return zshScript(commands, bin);
  return fishScript(commands, bin);
}

/** Runs `completion <shell>`: prints the script on stdout. */
export async function completion(shell: CompletionShell, program: Command, io: CommandIO): Promise<number> {
  io.stdout.write(completionScript(program, shell));
  return 0;
}
