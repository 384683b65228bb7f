/**
 * The command line as bin/mission-data.js runs it, but with V8's own optimisation from the first moment
 * (without `optimiseLaterAtFirst`): `node bench/lib/launch-optimising-early.js ARGS` is `mission-data ARGS` as it
 * ran before the bin asked V8 to optimise later in a command's first half second, so that the benchmarks can show
 * what that buys.
 */
import { keepWasmBaseline, main } from '../../dist/mission-data.js';

keepWasmBaseline();
process.exitCode = await main(process.argv);
