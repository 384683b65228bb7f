/**
 * Tests that need a facility some systems lack (SIGSTOP, `/proc`, a tmpfs, `script`, a signal a child can
 * handle, a file mode, a symlink): each names what it needs in its title, so a run on macOS or Windows lists
 * what it skipped and why, and test/unit/platform-skips.test.ts checks every such use is guarded.
 *
 *     const SIGSTOP = linuxOnly('SIGSTOP');
 *     describe.skipIf(SIGSTOP.missing)(SIGSTOP.title('a database that stops answering'), () => { … });
 */

/** A facility only some systems have, as the tests that need it see it. */
export interface PlatformNeed {
  /** What is needed, as the title says it: `SIGSTOP`, `bash`, `symlinks`. */
  readonly reason: string;
  /** The systems that have it. */
  readonly systems: readonly NodeJS.Platform[];
  /** True on a system without it: the condition of `describe.skipIf` / `it.skipIf`. */
  readonly missing: boolean;
  /** `name` with the need appended, on every system alike: `name (Linux only: SIGSTOP)`. */
  title(name: string): string;
}

function need(
  label: string,
  systems: readonly NodeJS.Platform[],
  reason: string,
  platform: NodeJS.Platform,
): PlatformNeed {
  return {
    reason,
    systems,
    missing: !systems.includes(platform),
    title: (name) => `${name} (${label}: ${reason})`,
  };
}

/** Needs Linux (SIGSTOP, `/proc`, a tmpfs, util-linux's `script` and `prlimit`): skipped on macOS and Windows. */
export function linuxOnly(reason: string, platform: NodeJS.Platform = process.platform): PlatformNeed {
  return need('Linux only', ['linux'], reason, platform);
}

/**
 * Needs a Unix system, Linux or macOS (a signal the child handles, file modes, symlinks without privilege, bash,
 * `touch`): skipped on Windows.
 */
export function unixOnly(reason: string, platform: NodeJS.Platform = process.platform): PlatformNeed {
  return need('not on Windows', ['linux', 'darwin'], reason, platform);
}
