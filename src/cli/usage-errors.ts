/**
 * Commander's usage errors in the tool's own style: `Error: …` and a `Hint:` line (a suggestion, or where the
 * command's help is), instead of commander's `error: option …`.
 */
import type { Command, CommanderError } from 'commander';

/** The command a usage error came from, set by `nameUsageErrors`. */
const COMMAND = Symbol('command');

type NamedError = CommanderError & { [COMMAND]?: string };

/** Makes every command of `program` tag the usage errors it throws with its name (`config set`). */
export function nameUsageErrors(program: Command): void {
  const visit = (command: Command, path: readonly string[]) => {
    command.exitOverride((error: NamedError) => {
      error[COMMAND] ??= path.join(' ');
      throw error;
    });
    for (const sub of command.commands) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
}

const unquote = (text: string) => text.replace(/^'(.*)'$/, '$1');

/** The long name of an option as commander names it (`-c, --concurrency <n>` → `--concurrency`). */
function optionName(flags: string): string {
  return /--[\w-]+/.exec(flags)?.[0] ?? flags.split(/[ ,]/)[0] ?? flags;
}

const sentence = (text: string) => {
  const trimmed = text.trim();
  const upper = `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}`;
  return /[.?!]$/.test(upper) ? upper : `${upper}.`;
};

/** The message and hint of a usage error commander threw. */
export function usageError(error: CommanderError): { message: string; hint: string } {
  const command = (error as NamedError)[COMMAND] ?? '';
  const help = `See mission-data${command ? ` ${command}` : ''} --help`;
  const [first = '', ...rest] = error.message.replace(/^error: /, '').split('\n');
  const suggestion = /^\(Did you mean (.+)\?\)$/.exec(rest.join(' ').trim())?.[1];
  const forCommand = command ? ` for ${command}` : '';
  const options = `${help} for the options and arguments it takes.`;
  // Commander's messages, each in the tool's words: [pattern, message, hint].
  const rules: Array<[RegExp, (match: RegExpExecArray) => string, string]> = [
    [/^unknown option '(.+)'$/, (m) => `Unknown option ${m[1]}${forCommand}.`, options],
    [/^unknown command '(.+)'$/, (m) => `Unknown command ${m[1]}.`, `${help} for the commands.`],
    [
      /^option '(.+)' argument missing$/,
      (m) => `${optionName(m[1] as string)} needs a value (${m[1]}).`,
      options,
    ],
    [
      /^option '(.+)' argument '(.*)' is invalid\.\s*(.*)$/,
      (m) => {
        const name = optionName(m[1] as string);
        const detail = (m[3] ?? '').replace(/^Allowed choices are /, 'Choose from ');
        // A message that names the value already (a filter given twice) says it once.
        if (detail.startsWith(name) && detail.includes(`${m[2]}`)) return sentence(detail);
        return detail.startsWith(name)
          ? `${detail.replace(/\.$/, '')}; got '${m[2]}'.`
          : `Invalid ${name} '${m[2]}'.${detail ? ` ${sentence(detail)}` : ''}`;
      },
      options,
    ],
    [/^missing required argument (.+)$/, (m) => `Missing ${unquote(m[1] as string)}${forCommand}.`, options],
  ];
  let message = sentence(first);
  let hint = options;
  for (const [pattern, say, help] of rules) {
    const match = pattern.exec(first);
    if (!match) continue;
    message = say(match);
    hint = help;
    break;
  }
  if (suggestion) hint = `Did you mean ${suggestion}? ${help}.`;
  return { message, hint };
}
