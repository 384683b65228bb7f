/** Benchmark case 5: start-up time of `mission-data --help` against `node -e 0`. */
import { command, compare, tool } from './lib/measure.js';
import { markdownTable } from './lib/stats.js';

/** The goal: at most this many milliseconds above a bare Node.js start. */
export const STARTUP_BUDGET_MS = 80;

/** Runs the case and returns its markdown section. */
export async function run({ quick = false } = {}) {
  const repetitions = quick ? 5 : 20;
  // Without the memory hook: preloading it would itself add to the start-up being measured.
  const result = await compare({
    repetitions,
    makeTool: () => tool(['--help'], { peakRss: false }),
    makeReference: () => command('node -e 0', process.execPath, ['-e', '0']),
  });
  const overhead = result.toolMs - result.referenceMs;
  const markdown = [
    '### Start-up: `mission-data --help` against `node -e 0`',
    '',
    `Median of ${repetitions} interleaved runs of each. Goal: within ${STARTUP_BUDGET_MS} ms of \`node -e 0\`.`,
    '',
    markdownTable(
      ['Case', 'mission-data --help', 'node -e 0', 'Difference', 'Goal met'],
      [
        [
          '5. start-up',
          `${result.toolMs.toFixed(1)} ms`,
          `${result.referenceMs.toFixed(1)} ms`,
          `${overhead.toFixed(1)} ms`,
          overhead <= STARTUP_BUDGET_MS ? 'yes' : 'no',
        ],
      ],
    ),
  ].join('\n');
  const goals = [
    {
      goal: `Case 5: start-up within ${STARTUP_BUDGET_MS} ms of \`node -e 0\``,
      measured: `${overhead.toFixed(1)} ms`,
      met: overhead <= STARTUP_BUDGET_MS,
    },
  ];
  return { markdown, goals };
}
