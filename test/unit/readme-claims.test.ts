import { execFileSync } from 'node:child_process';
/**
 * What the README says of the command line as a whole, held to the program: the options every client command takes
 * (and `--data-dir`, which `query` refuses), and the size of the bundle it ships, when one is built.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CommandIO } from '../../src/cli/io.js';
import { globalOptionsFor } from '../../src/cli/options.js';
import { buildProgram } from '../../src/cli/program.js';
import { ROOT } from '../helpers/e2e.js';

/** The commands that talk to the service, as the README's line names them. */
const CLIENT_COMMANDS = ['query', 'download', 'sync', 'coverage', 'status', 'verify', 'upload'];

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

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

/** The long flags a command declares (`--help` too, which commander adds to every command). */
function flagsOf(command: Command): Set<string> {
  return new Set([...command.options.map((option) => option.long ?? ''), '--help']);
}

/** The README's paragraph that begins `Options of every client command:`, on one line. */
function optionsParagraph(): string {
  const start = README.indexOf('Options of every client command:');
  expect(start).toBeGreaterThan(0);
  return README.slice(start, README.indexOf('\n\n', start)).replace(/\s+/g, ' ');
}

describe("the README's options of every client command", () => {
  const root = program();
  const commands = CLIENT_COMMANDS.map((name) => {
    const command = root.commands.find((entry) => entry.name() === name);
    if (!command) throw new Error(`no command ${name}`);
    return command;
  });
  // The options shared as such (`--output-format` is on every one too, each with formats of its own).
  const globals = (name: string) => new Set(globalOptionsFor(name).map((make) => make().long ?? ''));
  const shared = [...globals('query'), '--help'].filter(
    (flag) => flag === '--help' || CLIENT_COMMANDS.every((name) => globals(name).has(flag)),
  );

  it('are those every one of them declares', () => {
    const [every = ''] = optionsParagraph().split(';');
    const listed = [...every.matchAll(/`([^`]+)`/g)].map((match) => {
      const flag = (match[1] as string).split('/').at(-1) as string;
      return flag === '-h' ? '--help' : flag;
    });
    expect(listed.sort()).toEqual(shared.sort());
    for (const command of commands) for (const flag of shared) expect(flagsOf(command)).toContain(flag);
  });

  it('say --data-dir is every one of them but query', () => {
    expect(optionsParagraph()).toContain('`--data-dir` of every one but `query`');
    expect(
      commands.filter((command) => !flagsOf(command).has('--data-dir')).map((command) => command.name()),
    ).toEqual(['query']);
  });
});

/** Bytes of a file, or of every file below a folder. */
function sizeOf(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
}

describe.skipIf(!existsSync(join(ROOT, 'dist/mission-data.js')))("the README's size of the bundle", () => {
  it('is the built one, entry and chunks, within a tenth', () => {
    const entry = sizeOf(join(ROOT, 'dist/mission-data.js'));
    const all = entry + sizeOf(join(ROOT, 'dist/chunks'));
    const stated =
      /bundled, about ([\d.]+) MB in all: an entry of about (\d+) KB \(`dist\/mission-data\.js`\)/.exec(
        README.replace(/\s+/g, ' '),
      );
    expect(stated, 'the README states the size of the bundle and of its entry').not.toBeNull();
    const [, megabytes, kilobytes] = stated as RegExpExecArray;
    expect(Math.abs(Number(megabytes) * 1e6 - all) / all).toBeLessThanOrEqual(0.1);
    expect(Math.abs(Number(kilobytes) * 1e3 - entry) / entry).toBeLessThanOrEqual(0.1);
  });
});

describe.skipIf(!existsSync(join(ROOT, 'dist/mission-data.js')))("the README's size of the package", () => {
  it('is what npm pack counts, unpacked and packed, within a tenth', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as Array<{ size: number; unpackedSize: number }>;
    const stated = /unpacks to about ([\d.]+) MB \(its tarball is about ([\d.]+) MB\)/.exec(
      README.replace(/\s+/g, ' '),
    );
    expect(stated, 'the README states the size of the package').not.toBeNull();
    const [, unpacked, tarball] = stated as RegExpExecArray;
    expect(
      Math.abs(Number(unpacked) * 1e6 - (packed?.unpackedSize ?? 0)) / (packed?.unpackedSize ?? 1),
    ).toBeLessThanOrEqual(0.1);
    expect(Math.abs(Number(tarball) * 1e6 - (packed?.size ?? 0)) / (packed?.size ?? 1)).toBeLessThanOrEqual(
      0.1,
    );
  });
});
