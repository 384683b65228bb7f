#!/usr/bin/env node
// A static import lets Node load the command line's modules as one graph, about 2 ms sooner than an import()
// after this file has run. Loading them compiles no WebAssembly: undici, the one user of it, loads later, lazily.
import { cacheCompiledCode, keepWasmBaseline, main, optimiseLaterAtFirst } from '../dist/mission-data.js';

// The V8 flags of src/cli/v8-flags.ts: WebAssembly kept at its baseline code, and on Node 20 functions optimised
// later during the first half second.
keepWasmBaseline();
optimiseLaterAtFirst();
// On Node 22.1 and later, the code compiled for the modules a command loads next is kept for the next start
// (src/cli/compile-cache.ts).
cacheCompiledCode();

process.exitCode = await main(process.argv);
