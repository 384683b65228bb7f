/** The bash completion script. */
import { type CommandModel, flagsOf, quote, type ValueKind } from './model.js';

/**
 * Paths as bash completes them: `-o filenames` has readline add a `/` and no space after a folder, so
 * `data` completes to `data/` and the next Tab walks into it (and quotes names with spaces); reading compgen's
 * lines one by one keeps such a name one word. Written for bash 3.2, macOS's: no `mapfile`, and `compopt`
 * (bash 4) only where it exists; bash 3.2 gets `-o filenames` from `complete` instead.
 */
const bashPaths = (compgenFlag: '-d' | '-f') =>
  `if type compopt >/dev/null 2>&1; then compopt -o filenames; fi; while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen ${compgenFlag} -- "$cur")`;

/** What bash does with an option's value: offer words, folders or files, or leave it to the user. */
function bashValueBody(value: ValueKind): string | undefined {
  if (value.kind === 'words')
    return `COMPREPLY=($(compgen -W ${quote(value.words.join(' '))} -- "$cur")); return 0;;`;
  if (value.kind === 'directory') return `${bashPaths('-d')}; return 0;;`;
  if (value.kind === 'file') return `${bashPaths('-f')}; return 0;;`;
  return value.kind === 'any' ? 'return 0;;' : undefined;
}

/** The bash completion script of `commands`. */
export function bashScript(commands: readonly CommandModel[], bin: string): string {
  const all = commands.flatMap((command) => [command, ...command.subcommands]);
  const { valueCases, commandValueCases } = bashValueCases(all);
  const optionCases = all.map(
    (command) => `      ${quote(command.path)}) words=${quote(flagsOf(command.options).join(' '))};;`,
  );
  const positionalCases = all.flatMap(bashPositionalCase);
  const parents = commands.filter((command) => command.subcommands.length > 0).map((command) => command.name);
  const name = `_${bin.replaceAll('-', '_')}`;
  return `# bash completion for ${bin} (bash 3.2 or later): load it, e.g. from ~/.bashrc:
#   eval "$(${bin} completion bash)"
${name}() {
${bashFindPath(parents)}
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
# No readline default: a command that takes no paths (query) offers no file names. Bash 3.2 has no compopt to
# ask for file name handling only where paths are offered: there it holds for every completion.
if type compopt >/dev/null 2>&1; then
  complete -F ${name} ${bin}
else
  complete -o filenames -F ${name} ${bin}
fi
`;
}

/**
 * The cases of option values. An option's value completes alike in every command that has it, unless commands
 * differ (each has its own `--output-format` choices): such a flag gets a case per command, matched on
 * "<command> <flag>".
 */
function bashValueCases(all: readonly CommandModel[]): { valueCases: string[]; commandValueCases: string[] } {
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
  return { valueCases, commandValueCases };
}

/** The case of a command's arguments: its subcommands, its words, or paths. */
function bashPositionalCase(command: CommandModel): string[] {
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
    return [`      ${quote(command.path)}) ${bashPaths('-f')};;`];
  }
  return [];
}

/** The script's first lines: the words so far read into the command's path and a count of its arguments. */
function bashFindPath(parents: readonly string[]): string {
  return `  local cur prev path word words args i line
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
  done`;
}
