/** The zsh completion script. */
import { type CommandModel, type OptionModel, quote } from './model.js';

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
          : option.value.kind === 'file'
            ? ':file:_files'
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

/** The zsh completion script of `commands`. */
export function zshScript(commands: readonly CommandModel[], bin: string): string {
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
