#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
// A static import lets Node load the command line's modules as one graph, about 2 ms sooner than an import()
// after this file has run. Loading them compiles no WebAssembly: undici, the one user of it, loads later, lazily.
import { main } from '../dist/mission-data.js';

// undici parses HTTP in WebAssembly. V8's background optimisation of that module costs ~35 MiB and holds up the
// exit of every command by 100 ms or more; its baseline code is not measurably slower on the bodies we read.
setFlagsFromString('--liftoff-only');

/** V8 11.3's `--interrupt-budget` (`node --v8-options`): how much a function runs before it is optimised. */
const V8_11_INTERRUPT_BUDGET = 67_584;
/** How long a command runs before V8 optimises as it would by default. */
const TIER_UP_LATER_MS = 1000;

// Node 20's V8 (11.3) optimises a function on background threads once it has run a while, with TurboFan alone:
// a command over within a second spent a quarter to a third of its CPU compiling code it then ran a few hundred
// times (a batch of 1,000 files: 94 functions, 0.45 s). For its first second a command asks V8 to wait four
// times as long, then V8's own default again, so that a long run is optimised as before. Node 22 and later
// optimise first with Maglev, which compiles cheaply: nothing is changed there, nor when the user set the flag.
const ownBudget = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((option) =>
  option.includes('interrupt-budget'),
);
if (process.versions.v8.startsWith('11.3.') && !ownBudget) {
  setFlagsFromString(`--interrupt-budget=${4 * V8_11_INTERRUPT_BUDGET}`);
  setTimeout(
    () => setFlagsFromString(`--interrupt-budget=${V8_11_INTERRUPT_BUDGET}`),
    TIER_UP_LATER_MS,
  ).unref();
}

process.exitCode = await main(process.argv);
