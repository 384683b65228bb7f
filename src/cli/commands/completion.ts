/**
 * `mission-data completion bash|zsh|fish|powershell`: prints a shell completion script. The script is written from the
 * program's own declarations (commands, options, their fixed choices) and the mission's value lists, so it
 * never lags behind them; it holds every list itself, so completing never starts Node.
 */
import type { Command } from 'commander';
import { bashScript } from '../completion/bash.js';
import { fishScript } from '../completion/fish.js';
import { type CompletionShell, programModel } from '../completion/model.js';
import { powershellScript } from '../completion/powershell.js';
import { zshScript } from '../completion/zsh.js';
import type { CommandIO } from '../io.js';

/** The completion script of `program` for `shell`. */
export function completionScript(program: Command, shell: CompletionShell): string {
  const commands = programModel(program);
  const bin = program.name();
  if (shell === 'bash') return bashScript(commands, bin);
  if (shell === 'zsh') return zshScript(commands, bin);
  if (shell === 'powershell') return powershellScript(commands, bin);
  return fishScript(commands, bin);
}

/** Runs `completion <shell>`: prints the script on stdout. */
export async function completion(shell: CompletionShell, program: Command, io: CommandIO): Promise<number> {
  io.stdout.write(completionScript(program, shell));
  return 0;
}
