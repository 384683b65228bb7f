/** The fish completion script. */
import { type CommandModel, type OptionModel, quote } from './model.js';

/** The fish completion script of `commands`. */
export function fishScript(commands: readonly CommandModel[], bin: string): string {
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
            ? " -x -a '(__fish_complete_directories)'"
            : option.value.kind === 'file'
              ? ' -r -F'
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
