/**
 * Preloaded (`node --import`) into a measured `mission-data` process: on exit it writes the process's peak
 * resident set size in bytes to the file named by MISSION_DATA_BENCH_RSS_FILE. Node cannot read a child's
 * rusage, and polling /proc would miss short peaks.
 */
import { writeFileSync } from 'node:fs';

const target = process.env.MISSION_DATA_BENCH_RSS_FILE;
if (target) {
  process.on('exit', () => {
    // maxRSS is in kibibytes on Linux.
    writeFileSync(target, String(process.resourceUsage().maxRSS * 1024));
  });
}
