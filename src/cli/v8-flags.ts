/**
 * The V8 flags the command line sets for its own process at start (bin/mission-data.js calls both; the bench's
 * launchers call one each, to show what the other buys). Set at run time: the flags V8 reads as it goes.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * undici parses HTTP in WebAssembly. V8's background optimisation of that module costs ~35 MiB and holds up the
 * exit of every command by 100 ms or more; its baseline code is not measurably slower on the bodies we read.
 */
export function keepWasmBaseline(): void {
  setFlagsFromString('--liftoff-only');
}

/** V8 11.3's `--interrupt-budget` (`node --v8-options`): how much a function runs before it is optimised. */
const V8_11_INTERRUPT_BUDGET = 67_584;
/**
 * How long a command runs before V8 optimises as it would by default. A batch of 1,000 files (half a second)
 * gains as much from waiting half a second as from waiting a whole one; a longer one loses by the wait what it
 * keeps running unoptimised after it: 12,000 files of 1 KiB spent 7 % more CPU after a wait of a second than of
 * half a second, 3,000 files 2 % more. Shorter waits cost the batch of 1,000 (11 % more CPU after 300 ms).
 */
const OPTIMISE_LATER_MS = 500;

/**
 * Node 20's V8 (11.3) optimises a function on background threads once it has run a while, with TurboFan alone:
 * a command over within a second spent a quarter to a third of its CPU compiling code it then ran a few hundred
 * times (a batch of 1,000 files: 94 functions, 0.45 s). For its first half second a command asks V8 to wait four
 * times as long, then V8's own default again, so that a long run is optimised as before. Node 22 and later
 * optimise first with Maglev, which compiles cheaply: nothing is changed there (an unknown flag would be an
 * error on stderr), nor when the user set the flag.
 */
export function optimiseLaterAtFirst(): void {
  const ownBudget = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((option) =>
    option.includes('interrupt-budget'),
  );
  if (!process.versions.v8.startsWith('11.3.') || ownBudget) return;
  setFlagsFromString(`--interrupt-budget=${4 * V8_11_INTERRUPT_BUDGET}`);
  setTimeout(
    () => setFlagsFromString(`--interrupt-budget=${V8_11_INTERRUPT_BUDGET}`),
    OPTIMISE_LATER_MS,
  ).unref();
}
