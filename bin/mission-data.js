#!/usr/bin/env node
// A static import lets Node load the command line's modules as one graph, about 2 ms sooner than an import()
// after this file has run. Loading them compiles no WebAssembly: undici, the one user of it, loads later, lazily.
import { keepWasmBaseline, main, optimiseLaterAtFirst } from '../dist/mission-data.js';

// The V8 flags of src/cli/v8-flags.ts: WebAssembly kept at its baseline code, and on Node 20 functions optimised
// later during the first second.
keepWasmBaseline();
optimiseLaterAtFirst();

process.exitCode = await main(process.argv);
