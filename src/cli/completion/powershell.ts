/** The PowerShell completion script (Windows PowerShell 5.1 and PowerShell 7). */
import { type CommandModel, flagsOf, type OptionModel } from './model.js';

/** Single-quoted for PowerShell, which doubles a quote inside single quotes. */
function psQuote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A PowerShell array of `words`. */
function psArray(words: readonly string[]): string {
  return `@(${words.map(psQuote).join(', ')})`;
}

/**
 * The value lists of options. A flag completes alike in every command that has it unless commands differ (each
 * has its own `--output-format` choices): such a flag gets an entry per command, keyed "<command> <flag>".
 */
function psValueLines(all: readonly CommandModel[]): string[] {
  const uses = new Map<string, Array<{ path: string; option: OptionModel }>>();
  for (const command of all)
    for (const option of command.options)
      if (option.value.kind !== 'none')
        uses.set(option.long, [...(uses.get(option.long) ?? []), { path: command.path, option }]);
  const lines: string[] = [];
  const wordsOf = (option: OptionModel) => (option.value.kind === 'words' ? option.value.words : undefined);
  for (const list of uses.values()) {
    const first = wordsOf(list[0]?.option as OptionModel)?.join(' ');
    const same = list.every((use) => wordsOf(use.option)?.join(' ') === first);
    for (const { path, option } of same ? list.slice(0, 1) : list) {
      const words = wordsOf(option);
      for (const flag of flagsOf([option])) {
        // Options whose value is a path or free text: PowerShell's own completion (paths) takes over.
        lines.push(`  $takesValue += ${psQuote(flag)}`);
        if (words) lines.push(`  $values[${psQuote(same ? flag : `${path} ${flag}`)}] = ${psArray(words)}`);
      }
    }
  }
  return [...new Set(lines)];
}

/** What a command's arguments complete to: its subcommands or its words; paths are PowerShell's own. */
function psArgumentLines(all: readonly CommandModel[]): string[] {
  return all.flatMap((command) => {
    const words =
      command.subcommands.length > 0
        ? command.subcommands.map((sub) => sub.name)
        : command.positional.kind === 'words'
          ? command.positional.words
          : undefined;
    return words ? [`  $arguments[${psQuote(command.path)}] = ${psArray(words)}`] : [];
  });
}

/** The PowerShell completion script of `commands`. */
export function powershellScript(commands: readonly CommandModel[], bin: string): string {
  const all = commands.flatMap((command) => [command, ...command.subcommands]);
  const top = ['-h', '--help', '-V', '--version', ...commands.map((command) => command.name)];
  const parents = commands.filter((command) => command.subcommands.length > 0).map((command) => command.name);
  const optionLines = all.map(
    (command) => `  $options[${psQuote(command.path)}] = ${psArray(flagsOf(command.options))}`,
  );
  return `# PowerShell completion for ${bin}: load it from your profile ($PROFILE), e.g.
#   ${bin} completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName ${bin} -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  # Flags differ in case only (-V, -v): every table and comparison here is case-sensitive.
  $options = [hashtable]::new([StringComparer]::Ordinal)
  $values = [hashtable]::new([StringComparer]::Ordinal)
  $arguments = [hashtable]::new([StringComparer]::Ordinal)
  $takesValue = @()
  $top = ${psArray(top)}
  $parents = ${psArray(parents)}
${optionLines.join('\n')}
${psValueLines(all).join('\n')}
${psArgumentLines(all).join('\n')}
${psFindPath()}
  if ($path -eq '') {
    $candidates = $top
  } elseif ($values.ContainsKey("$path $prev")) {
    $candidates = $values["$path $prev"]
  } elseif ($values.ContainsKey($prev)) {
    $candidates = $values[$prev]
  } elseif ($takesValue -ccontains $prev) {
    return
  } elseif ($wordToComplete.StartsWith('-')) {
    $candidates = $options[$path]
  } elseif ($arguments.ContainsKey($path) -and ($count -eq 0 -or $parents -ccontains $path)) {
    $candidates = $arguments[$path]
  } else {
    return
  }
  $candidates | Where-Object { $_ -clike "$wordToComplete*" } | ForEach-Object {
    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
  }
}
`;
}

/** The script's first lines: the words before the cursor read into the command's path and a count of its arguments. */
function psFindPath(): string {
  return `  # The words before the one being completed (which ends at the cursor), the program's name left out.
  $words = @($commandAst.CommandElements | Select-Object -Skip 1 |
    Where-Object { $_.Extent.EndOffset -lt $cursorPosition } | ForEach-Object { $_.ToString() })
  $path = ''
  $count = 0
  $prev = ''
  # The command (and subcommand) are the first words that are neither options nor option values.
  for ($i = 0; $i -lt $words.Count; $i++) {
    $word = $words[$i]
    if (-not $word.StartsWith('-')) {
      if ($path -eq '') { $path = $word }
      elseif ($parents -ccontains $path) { $path = "$path $word" }
      elseif ($i -gt 0 -and -not $words[$i - 1].StartsWith('-')) { $count++ }
    }
    $prev = $word
  }`;
}
