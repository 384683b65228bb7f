/**
 * Shell completion: the bash script is sourced in a real bash and asked for completions the way bash asks
 * (COMP_WORDS, COMP_CWORD, then the function fills COMPREPLY); the zsh and fish scripts are checked by
 * their shells' syntax check where those shells are installed, and for the value lists they carry.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Both generations' words: the service holds files of both, so a filter takes either.
import { ANY_DATA_LEVELS as DATA_LEVELS, ANY_INSTRUMENTS as INSTRUMENTS } from '../../src/naming/mission.js';
import { assertBuilt, cleanup, runCli, tempDir } from '../helpers/e2e.js';
import { linuxOnly, unixOnly } from '../helpers/platform.js';

const BASH = unixOnly('bash');
// `source <(…)` reads nothing in bash 3.2, and without compopt the script registers with -o filenames there.
const BASH4 = linuxOnly('bash 4 or later, macOS ships 3.2');
const SCRIPT = linuxOnly("util-linux's script");

const exec = promisify(execFile);
let home: string;
const scripts: Record<string, string> = {};

/** Whether `shell` is installed here (CI machines may have bash only). */
async function has(shell: string, args = ['-c', 'exit 0']): Promise<boolean> {
  try {
    await exec(shell, args);
    return true;
  } catch {
    return false;
  }
}
const hasZsh = await has('zsh');
const hasFish = await has('fish');
// script(1) writes its record to the file named last: /dev/null.
const hasScript = await has('script', ['-qec', 'exit 0', '/dev/null']);

beforeAll(async () => {
  assertBuilt();
  home = await tempDir();
  for (const shell of ['bash', 'zsh', 'fish']) {
    const run = await runCli(['completion', shell], { cwd: home });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    scripts[shell] = run.stdout;
    await writeFile(join(home, `completion.${shell}`), run.stdout);
  }
});
afterAll(() => cleanup(home));

/** What bash completes `words` to, the cursor being on the last word. */
async function complete(words: readonly string[]): Promise<string[]> {
  const quoted = words.map((word) => `'${word}'`).join(' ');
  const { stdout } = await exec('bash', [
    '-c',
    `source "$1"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMP_LINE="\${COMP_WORDS[*]}"; _mission_data; printf '%s\\n' "\${COMPREPLY[@]}"`,
    'bash',
    join(home, 'completion.bash'),
  ]);
  return stdout.split('\n').filter((line) => line !== '');
}

describe.skipIf(BASH.missing)(BASH.title('completion bash'), () => {
  it.skipIf(BASH4.missing)(BASH4.title('registers a completion function for mission-data'), async () => {
    const { stdout } = await exec('bash', [
      '-c',
      'source <(node "$1" completion bash); complete -p mission-data',
      'bash',
      join(import.meta.dirname, '../../bin/mission-data.js'),
    ]);
    // No `-o default`: readline's file names would come back wherever the script offers nothing (query).
    expect(stdout.trim()).toBe('complete -F _mission_data mission-data');
  });

  it('completes the commands, and the options of each', async () => {
    expect(await complete(['mission-data', ''])).toEqual(
      expect.arrayContaining(['query', 'download', 'upload', 'serve', 'config', 'completion', '--help']),
    );
    expect(await complete(['mission-data', 'd'])).toEqual(['download']);
    expect(await complete(['mission-data', 'query', '--ins'])).toEqual(['--instrument']);
    expect(await complete(['mission-data', 'upload', '--no-'])).toEqual(['--no-checksum']);
    expect(await complete(['mission-data', 'serve', '--wi'])).toEqual(['--wire']);
    expect(await complete(['mission-data', 'sy'])).toEqual(['sync']);
    expect(await complete(['mission-data', 'sync', '--pr'])).toEqual(['--prune']);
    expect(await complete(['mission-data', 'sync', '--output-format', ''])).toEqual(['paths', 'json']);
  });

  it('offers an option only on the commands it acts on', async () => {
    expect(await complete(['mission-data', 'query', '--data-'])).toEqual(['--data-level']);
    expect(await complete(['mission-data', 'download', '--data-'])).toEqual(['--data-dir', '--data-level']);
  });

  it('completes the fixed values: instruments, levels, tables, output formats', async () => {
    expect(await complete(['mission-data', 'query', '--instrument', ''])).toEqual([...INSTRUMENTS]);
    expect(await complete(['mission-data', 'download', '--instrument', 'ul'])).toEqual([
      'ultra-45',
      'ultra-90',
      'ultra',
    ]);
    expect(await complete(['mission-data', 'download', '--data-level', 'l1'])).toEqual(
      DATA_LEVELS.filter((level) => level.startsWith('l1')),
    );
    expect(await complete(['mission-data', 'query', '--table', ''])).toEqual([
      'science',
      'ancillary',
      'spice',
    ]);
    expect(await complete(['mission-data', 'query', '--type', 'leap'])).toEqual(['leapseconds']);
    expect(await complete(['mission-data', 'query', '--output-format', ''])).toEqual([
      'table',
      'json',
      'csv',
    ]);
    expect(await complete(['mission-data', 'query', '--extension', 'c'])).toEqual(['cdf', 'csv']);
    expect(await complete(['mission-data', 'serve', '--dialect', ''])).toEqual(['both', 'spec', 'today']);
  });

  it('completes after earlier options and values', async () => {
    expect(await complete(['mission-data', 'query', '--instrument', 'mag', '--data-level', 'l2'])).toEqual([
      'l2',
      'l2a',
      'l2b',
      'l2c',
    ]);
    expect(await complete(['mission-data', 'query', '--instrument', 'mag', '--out'])).toEqual([
      '--output-format',
    ]);
  });

  it('completes config subcommands, their keys, and shells', async () => {
    expect(await complete(['mission-data', 'config', ''])).toEqual(['list', 'get', 'set', 'unset']);
    expect(await complete(['mission-data', 'config', 'get', ''])).toEqual(
      expect.arrayContaining(['url', 'api-key', 'data-dir']),
    );
    expect(await complete(['mission-data', 'config', 'set', 'url', ''])).toEqual([]);
    expect(await complete(['mission-data', 'config', 'list', '--d'])).toEqual(['--data-dir', '--debug']);
    expect(await complete(['mission-data', 'completion', ''])).toEqual(['bash', 'zsh', 'fish', 'powershell']);
  });
});

/**
 * What an interactive bash runs after `lines` are typed into it on a terminal (`script` gives it one), Tab
 * included: `mission-data` is a function there that prints its arguments as `<arg>`, so a completion that
 * left a space shows as two arguments, and one that added a `/` shows it.
 */
async function typedInBash(cwd: string, lines: readonly string[]): Promise<string[]> {
  const setup = `source ${join(home, 'completion.bash')}\nmission-data() { printf '<%s>' "$@"; echo; }\n`;
  const { stdout } = await new Promise<{ stdout: string }>((done, fail) => {
    const child = execFile(
      'script',
      ['-qec', 'bash --norc --noprofile -i', '/dev/null'],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: cwd, TERM: 'dumb', INPUTRC: '/dev/null' },
        timeout: 20_000,
      },
      (error, out) => (error ? fail(error) : done({ stdout: out })),
    );
    child.stdin?.end(`${setup}${lines.join('\n')}\nexit\n`);
  });
  return stdout
    .split(/\r?\n/)
    .map((line) => line.replace(/\r/g, ''))
    .filter((line) => line.startsWith('<'));
}

describe.skipIf(SCRIPT.missing || !hasScript)(
  SCRIPT.title('completion bash on a terminal (Tab typed into an interactive bash)'),
  () => {
    it('walks into folders, leaves query without file names, keeps names with spaces whole', async () => {
      const cwd = join(home, 'tree');
      await mkdir(join(cwd, 'data', 'imap', 'mag'), { recursive: true });
      await writeFile(join(cwd, 'data', 'my file.cdf'), '');
      const ran = await typedInBash(cwd, [
        'mission-data upload da\tX',
        'mission-data upload data/im\tX',
        'mission-data download --data-dir da\tX',
        'mission-data upload data/my\tX',
        'mission-data query da\tX',
        'mission-data query --instrument ma\tX',
      ]);
      expect(ran).toEqual([
        '<upload><data/X>',
        '<upload><data/imap/X>',
        '<download><--data-dir><data/X>',
        '<upload><data/my file.cdf><X>',
        '<query><daX>',
        '<query><--instrument><mag><X>',
      ]);
    });
  },
);

describe('completion zsh and fish', () => {
  it('carry the same commands and value lists', () => {
    for (const shell of ['zsh', 'fish']) {
      const script = scripts[shell] as string;
      for (const word of ['query', 'download', 'upload', 'serve', 'config', 'completion']) {
        expect(script).toContain(word);
      }
    }
    expect(scripts.zsh).toMatch(/^#compdef mission-data\n/);
    expect(scripts.zsh).toContain(`'--instrument=[instrument, e.g. mag]:value:(${INSTRUMENTS.join(' ')})'`);
    expect(scripts.zsh).toContain("'--output-format=[how to print the results]:value:(table json csv)'");
    expect(scripts.fish).toContain(`-l instrument -x -a '${INSTRUMENTS.join(' ')}'`);
    expect(scripts.fish).toContain(`-l data-level -x -a '${DATA_LEVELS.join(' ')}'`);
    expect(scripts.fish).toContain("-l output-format -x -a 'table json csv'");
    // Paths: folders for a folder's value, files (and folders to walk into) for a file's; none for query.
    expect(scripts.zsh).toContain("'--data-dir=[");
    expect(scripts.zsh).toMatch(/'--data-dir=\[[^']*\]:folder:_files -\/'/);
    expect(scripts.zsh).toMatch(/'--html=\[[^']*\]:file:_files'/);
    expect(scripts.fish).toMatch(/-l data-dir -x -a '\(__fish_complete_directories\)'/);
    expect(scripts.fish).toMatch(/-l html -r -F/);
    expect(scripts.fish).toContain('complete -c mission-data -f\n');
    expect(scripts.fish).not.toMatch(/__fish_seen_subcommand_from query' -F/);
    expect(scripts.fish).toContain("complete -c mission-data -n '__fish_seen_subcommand_from upload' -F");
  });

  // zsh and fish are not on every machine (CI installs nothing but npm packages): their syntax checks run
  // where they are installed and are skipped elsewhere.
  it.skipIf(!hasZsh)('zsh -n accepts the zsh script', async () => {
    await exec('zsh', ['-n', join(home, 'completion.zsh')]);
  });
  it.skipIf(!hasFish)('fish -n accepts the fish script', async () => {
    await exec('fish', ['-n', join(home, 'completion.fish')]);
  });

  it('refuses an unknown shell', async () => {
    const run = await runCli(['completion', 'tcsh'], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Allowed choices are bash, zsh, fish, powershell');
  });
});
