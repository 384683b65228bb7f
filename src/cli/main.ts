/**
 * The command line's entry (the bundle's `main`): runs the program on argv with one abort signal for every closing
 * signal (Ctrl-C, SIGTERM, a closed terminal or console window, Ctrl-Break), prints errors (message and hint; the
 * stack only with `--debug`) and returns the exit status.
 */
import { CommanderError } from 'commander';
import { ExitCode, InterruptedBySignal, isMissionDataError } from '../core/errors.js';
import { CLOSING_SIGNALS, type ClosingSignal, closingSignals } from '../core/signals.js';
import type { CommandIO } from './io.js';
import { buildProgram } from './program.js';
import { usageError } from './usage-errors.js';

async function printError(error: unknown, io: CommandIO, debug: boolean): Promise<number> {
  if (isMissionDataError(error)) {
    io.stderr.write(`Error: ${error.message}\n`);
    // Loaded only when there is an error to explain: a run that succeeds does not pay for the hints.
    const hint = (await import('./hints.js')).commandLineHint(error);
    if (hint) io.stderr.write(`Hint: ${hint}\n`);
    if (debug && error.stack) io.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`Error: ${message}\n`);
  if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  else io.stderr.write('This is a bug in mission-data; run again with --debug for details.\n');
  return ExitCode.Failure;
}

/** A reader that stops early (`| head`) closes the pipe: the rest of the results is simply not wanted. */
function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') process.stderr.write(`Error: cannot write results: ${error.message}\n`);
}

/**
 * A terminal that closed (SIGHUP) takes stderr with it: writes fail with EIO, or EPIPE from a pipe. There is nobody
 * left to tell, and the run must still end cleanly: release its lock and write its record.
 */
function onStderrError(): void {}

export { cacheCompiledCode } from './compile-cache.js';
export { keepWasmBaseline, optimiseLaterAtFirst } from './v8-flags.js';

/** Runs the command line with `argv` (as `process.argv`) and returns the exit status. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const controller = new AbortController();
  let interrupted = false;
  // 128 + the signal's number, as shells report it: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP.
  let interruptedStatus: number = ExitCode.Interrupted;
  const onSignal = (signal: ClosingSignal) => {
    if (interrupted) process.exit(interruptedStatus); // A second Ctrl-C leaves at once.
    interrupted = true;
    interruptedStatus = CLOSING_SIGNALS[signal];
    controller.abort(new InterruptedBySignal(signal));
  };
  // One listener per signal that knows its signal: `process.emit('SIGHUP')` passes none.
  const listeners = closingSignals.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, listener] of listeners) process.on(signal, listener);
  // Kept after `main` returns: the pipe can break while buffered output is still being written.
  process.stdout.off('error', onStdoutError).on('error', onStdoutError);
  process.stderr.off('error', onStderrError).on('error', onStderrError);
  const io: CommandIO = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    signal: controller.signal,
  };
  const debug = argv.includes('--debug');
  let work: (() => Promise<number | undefined>) | undefined;
  try {
    const program = buildProgram(io, (next) => {
      work = next;
    });
    await program.parseAsync([...argv]);
    const status = work ? ((await work()) ?? ExitCode.Success) : ExitCode.Success;
    return interrupted && status !== ExitCode.Success ? interruptedStatus : status;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with exit code 0; everything else commander rejects is a usage error, told in the
      // tool's style.
      if (
        error.exitCode === 0 ||
        error.code === 'commander.help' ||
        error.code === 'commander.helpDisplayed'
      ) {
        return error.exitCode === 0 ? ExitCode.Success : ExitCode.Usage;
      }
      const { message, hint } = usageError(error);
      io.stderr.write(`Error: ${message}\nHint: ${hint}\n`);
      return ExitCode.Usage;
    }
    const status = await printError(error, io, debug);
    return interrupted ? interruptedStatus : status;
  } finally {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  }
}
