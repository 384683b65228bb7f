/** Whether a process of this host still runs, for the locks and part files that name their owner's PID. */

/** True when process `pid` of this host is alive (EPERM: alive, but another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
