#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
// A static import lets Node load the command line's modules as one graph, about 2 ms sooner than an import()
// after this file has run. Loading them compiles no WebAssembly: undici, the one user of it, loads later, lazily.
import { main } from '../dist/mission-data.js';

// undici parses HTTP in WebAssembly. V8's background optimisation of that module costs ~35 MiB and holds up the
// exit of every command by 100 ms or more; its baseline code is not measurably slower on the bodies we read.
setFlagsFromString('--liftoff-only');

process.exitCode = await main(process.argv);
