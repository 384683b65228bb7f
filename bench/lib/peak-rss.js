/**
 * Preloaded (`node --import`) into a measured `mission-data` process: on exit it writes the process's peak
 * resident set size in bytes to the file named by MISSION_DATA_BENCH_RSS_FILE. Node cannot read a child's
 * rusage, and polling /proc would miss short peaks.
 *
 * On Linux the peak is VmHWM of /proc/self/status, the high-water mark of this program's own memory. Not
 * `process.resourceUsage().maxRSS`: Linux carries that over from before `exec`, so a child spawned by a large
 * parent (the harness, at 100 MiB and more after a few cases) reports the parent's resident set at the fork.
 */
import { readFileSync, writeFileSync } from 'node:fs';

function peakResidentBytes() {
  try {
    const match = /^VmHWM:\s*(\d+)\s*kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall back to rusage, which is the process's own elsewhere.
  }
  // maxRSS is in kibibytes.
  return process.resourceUsage().maxRSS * 1024;
}

const target = process.env.MISSION_DATA_BENCH_RSS_FILE;
if (target) {
  process.on('exit', () => {
    writeFileSync(target, String(peakResidentBytes()));
  });
}
