/**
 * Which command takes which setting: the table says what each setting acts on, in the library's words, and the
 * command line says what each of its commands does; the core names no command.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { COMMAND_TARGETS, settingOptionsFor, takesSetting } from '../../src/cli/options.js';
import { buildProgram } from '../../src/cli/program.js';
import { displayName, SETTINGS } from '../../src/core/settings.js';

function program(): Command {
  const stream = () => Object.assign(new PassThrough(), { isTTY: false });
  const io: CommandIO = {
    stdout: stream(),
    stderr: stream(),
    stdin: stream(),
    signal: new AbortController().signal,
  };
  return buildProgram(io, () => {});
}

/** The command `name` (`list` is `config list`). */
function commandNamed(root: Command, name: string): Command {
  const all = [...root.commands, ...root.commands.flatMap((command) => command.commands)];
  const found = all.find((command) => command.name() === name);
  if (!found) throw new Error(`no command ${name}`);
  return found;
}

/** The flags of the table's settings a command declares. */
function settingFlags(command: Command): string[] {
  const flags = new Set(SETTINGS.map((spec) => `--${displayName(spec)}`));
  return command.options.map((option) => option.long ?? '').filter((long) => flags.has(long));
}

describe('the settings each command takes', () => {
  it('are those acting on what it does, whatever their group', () => {
    const root = program();
    for (const name of Object.keys(COMMAND_TARGETS)) {
      const expected = SETTINGS.filter((spec) => takesSetting(name, spec)).map(
        (spec) => `--${displayName(spec)}`,
      );
      expect([name, settingFlags(commandNamed(root, name)).sort()]).toEqual([name, expected.sort()]);
    }
  });

  it('give upload the concurrency alone of the transfer settings, and download and sync all of them', () => {
    const root = program();
    const transfer = ['--concurrency', '--connections', '--part-size', '--require-checksum'];
    const taken = (name: string) =>
      settingFlags(commandNamed(root, name)).filter((flag) => transfer.includes(flag));
    expect(taken('upload')).toEqual(['--concurrency']);
    expect(taken('download').sort()).toEqual([...transfer].sort());
    expect(taken('sync').sort()).toEqual([...transfer].sort());
    expect(taken('verify')).toEqual([]);
  });

  it('follow what a setting says it acts on', () => {
    const uploadsOnly = { actsOn: ['uploads'] } as const;
    expect(takesSetting('upload', uploadsOnly)).toBe(true);
    expect(takesSetting('download', uploadsOnly)).toBe(false);
    expect(settingOptionsFor('upload', 'transfer').map((make) => make().long)).toEqual(['--concurrency']);
    expect(() => takesSetting('launch', uploadsOnly)).toThrow('launch has no entry in COMMAND_TARGETS');
  });

  it("upload's --concurrency is the table's: its check, and help-only default", () => {
    const option = commandNamed(program(), 'upload').options.find((entry) => entry.long === '--concurrency');
    expect(option?.description).toBe('files uploaded at once');
    expect(option?.defaultValue).toBe(8);
    expect(() => option?.parseArg?.('65', undefined)).toThrow(
      '--concurrency must be a whole number from 1 to 64.',
    );
  });
});

describe('the core', () => {
  it('names no command of the command line', () => {
    const source = readFileSync(resolve(import.meta.dirname, '../../src/core/settings.ts'), 'utf8');
    const commands = [...Object.keys(COMMAND_TARGETS), 'serve', 'config', 'completion'];
    for (const name of commands) expect([name, source.includes(`'${name}'`)]).toEqual([name, false]);
  });
});
