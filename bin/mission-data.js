#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';

// undici parses HTTP in WebAssembly. V8's background optimisation of that module costs ~35 MiB and holds up the
// exit of every command by 100 ms or more; its baseline code is not measurably slower on the bodies we read.
setFlagsFromString('--liftoff-only');
const { main } = await import('../dist/mission-data.js');

process.exitCode = await main(process.argv);
