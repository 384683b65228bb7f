/** Small file systems for tests of a full disk, where the machine lets the tests mount one. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Mounts a tmpfs of `size` on a new folder; undefined where mounting is refused (not root, a container) or
 * impossible (macOS and Windows have no tmpfs: tests that mount one are Linux only).
 */
export function mountTmpfs(size: string): string | undefined {
  const folder = realpathSync.native(mkdtempSync(join(tmpdir(), 'mission-tmpfs-')));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', folder], { stdio: 'ignore' });
    return folder;
  } catch {
    rmSync(folder, { recursive: true, force: true });
    return undefined;
  }
}

/** Unmounts a folder `mountTmpfs` made, and removes it. */
export function unmount(folder: string): void {
  execFileSync('umount', [folder], { stdio: 'ignore' });
  rmSync(folder, { recursive: true, force: true });
}
