/**
 * The command line as bin/mission-data.js runs it, but without the V8 flag `--liftoff-only` that the bin sets
 * at run time (`keepWasmBaseline`): `node bench/lib/launch-without-liftoff.js ARGS` is `mission-data ARGS` with
 * V8's default WebAssembly tiering, so that the benchmarks can show what the flag buys.
 */
import { main, optimiseLaterAtFirst } from '../../dist/mission-data.js';

optimiseLaterAtFirst();
process.exitCode = await main(process.argv);
