/**
 * The completion scripts as printed, for the shells test/e2e/completion.test.ts does not run: bash as macOS
 * ships it (3.2: none of bash 4's constructs, and its own way without `compopt`), and PowerShell (the same
 * commands, options and value lists as bash, zsh and fish, in a `Register-ArgumentCompleter` block).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionScript } from '../../src/cli/commands/completion.js';
import { COMPLETION_SHELLS, programModel } from '../../src/cli/completion/model.js';
import type { CommandIO } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { ANY_DATA_LEVELS, ANY_INSTRUMENTS } from '../../src/naming/mission.js';
import { unixOnly } from '../helpers/platform.js';

const BASH = unixOnly('bash');
const exec = promisify(execFile);

const io: CommandIO = {
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  stdin: new PassThrough(),
  signal: new AbortController().signal,
};
const program = buildProgram(io, () => undefined);
const scripts = Object.fromEntries(
  COMPLETION_SHELLS.map((shell) => [shell, completionScript(program, shell)]),
);
const commands = programModel(program);

/** Constructs of bash 4 or later, which macOS's bash 3.2 refuses or reads otherwise. */
const BASH4_ONLY: ReadonlyArray<[string, RegExp]> = [
  ['mapfile / readarray', /\b(mapfile|readarray)\b/],
  ['associative arrays', /\b(declare|local|typeset)\s+-[a-zA-Z]*A/],
  ['name references', /\b(declare|local|typeset)\s+-[a-zA-Z]*n\b/],
  ['case changes (,, and ^^)', /\$\{[^}]*(,,?|\^\^?)\}/],
  ['[[ -v name ]]', /\[\[\s+-v\s/],
  ['negative array indexes', /\[\s*-\d+\s*\]\}/],
  ['|& and &>>', /\|&|&>>/],
  ['case fall-through ;& ;;&', /;;?&/],
  ['coproc', /\bcoproc\b/],
  ['transformations (@Q)', /\$\{[^}]*@[QEPAaUuLK]\}/],
  ['globstar', /globstar/],
];

/** The bash-4-only constructs `script` uses; `compopt` counts unless asked about with `type compopt` first. */
function bash4Uses(script: string): string[] {
  const found = BASH4_ONLY.filter(([, pattern]) => pattern.test(script)).map(([name]) => name);
  const unguarded = script
    .split('\n')
    .filter((line) => /\bcompopt\b/.test(line) && !/type compopt >\/dev\/null 2>&1; then compopt/.test(line))
    .filter((line) => !/^\s*#|^if type compopt >\/dev\/null 2>&1; then$/.test(line));
  return unguarded.length > 0 ? [...found, 'compopt without a check'] : found;
}

describe('completion bash on bash 3.2', () => {
  it('uses nothing of bash 4', () => {
    expect(bash4Uses(scripts.bash as string)).toEqual([]);
  });

  it('finds what bash 3.2 lacks in a script that uses it', () => {
    expect(bash4Uses('mapfile -t COMPREPLY < <(compgen -f -- "$cur")\ncompopt -o filenames\n')).toEqual([
      'mapfile / readarray',
      'compopt without a check',
    ]);
    expect(bash4Uses(`declare -A seen\necho "\${cur,,}"\n[[ -v x ]]\n`)).toEqual([
      'associative arrays',
      'case changes (,, and ^^)',
      '[[ -v name ]]',
    ]);
  });

  describe.skipIf(BASH.missing)(BASH.title('without compopt, as in bash 3.2'), () => {
    let folder: string;
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'mission-bash32-'));
      await writeFile(join(folder, 'completion.bash'), scripts.bash as string);
      await mkdir(join(folder, 'data', 'imap'), { recursive: true });
      await writeFile(join(folder, 'data', 'my file.cdf'), '');
    });
    afterAll(() => rm(folder, { recursive: true, force: true }));

    /** Runs `commands` in a bash whose `compopt` builtin is disabled, after the script is sourced. */
    async function inBash32(commands: string): Promise<string> {
      const { stdout } = await exec(
        'bash',
        ['-c', `enable -n compopt; source completion.bash; ${commands}`],
        { cwd: folder, env: { PATH: process.env.PATH ?? '' } },
      );
      return stdout;
    }

    it('registers with -o filenames, and still completes words and paths, a name with a space one word', async () => {
      expect((await inBash32('complete -p mission-data')).trim()).toBe(
        'complete -o filenames -F _mission_data mission-data',
      );
      const complete = (words: string[]) =>
        inBash32(
          `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mission_data; printf '%s\\n' "\${COMPREPLY[@]}"`,
        );
      expect(await complete(['mission-data', 'completion', ''])).toBe('bash\nzsh\nfish\npowershell\n');
      expect((await complete(['mission-data', 'upload', 'data/'])).split('\n').sort()).toEqual([
        '',
        'data/imap',
        'data/my file.cdf',
      ]);
      expect(await complete(['mission-data', 'download', '--data-dir', 'da'])).toBe('data\n');
    });
  });
});

describe('completion powershell', () => {
  const script = scripts.powershell as string;

  it('registers a native completer for mission-data, told how to load it', () => {
    expect(script).toMatch(/^# PowerShell completion for mission-data: load it from your profile/);
    expect(script).toContain('#   mission-data completion powershell | Out-String | Invoke-Expression\n');
    expect(script).toContain('Register-ArgumentCompleter -Native -CommandName mission-data -ScriptBlock {\n');
    expect(script).toContain('param($wordToComplete, $commandAst, $cursorPosition)');
    expect(script.endsWith('}\n')).toBe(true);
    const braces = [...script].reduce((depth, char) => depth + (char === '{' ? 1 : char === '}' ? -1 : 0), 0);
    expect(braces).toBe(0);
  });

  it('carries every command and the options of each, as bash, zsh and fish do', () => {
    for (const command of commands) {
      expect(script).toContain(`'${command.name}'`);
      for (const shell of ['bash', 'zsh', 'fish']) expect(scripts[shell]).toContain(command.name);
      for (const each of [command, ...command.subcommands]) {
        const flags = each.options.flatMap((option) =>
          option.short ? [option.short, option.long] : [option.long],
        );
        expect(script).toContain(
          `  $options['${each.path}'] = @(${flags.map((flag) => `'${flag}'`).join(', ')})\n`,
        );
      }
    }
  });

  it('carries the same value lists', () => {
    const list = (words: readonly string[]) => `@(${words.map((word) => `'${word}'`).join(', ')})`;
    expect(script).toContain(`  $values['--instrument'] = ${list(ANY_INSTRUMENTS)}\n`);
    expect(script).toContain(`  $values['--data-level'] = ${list(ANY_DATA_LEVELS)}\n`);
    expect(scripts.fish).toContain(`-l instrument -x -a '${ANY_INSTRUMENTS.join(' ')}'`);
    // Each command its own output formats, as bash matches "<command> <flag>".
    expect(script).toContain("  $values['query --output-format'] = @('table', 'json', 'csv')\n");
    expect(script).toContain("  $values['coverage --output-format'] = @('calendar', 'json', 'csv')\n");
    expect(script).toContain("  $values['status --output-format'] = @('text', 'json')\n");
    expect(scripts.bash).toContain("'coverage --output-format')");
    expect(script).toContain(`  $arguments['completion'] = ${list(COMPLETION_SHELLS)}\n`);
    expect(script).toContain("  $arguments['config'] = @('list', 'get', 'set', 'unset')\n");
    expect(script).toMatch(/ {2}\$arguments\['config get'\] = @\('url', 'api-key', 'data-dir'/);
    // A folder's or a file's value: PowerShell's own path completion takes over.
    expect(script).toContain("  $takesValue += '--data-dir'\n");
    expect(script).not.toContain("$values['--data-dir']");
  });

  it('quotes a single quote as PowerShell reads it', () => {
    expect(script).not.toMatch(/'\\''/);
  });
});
