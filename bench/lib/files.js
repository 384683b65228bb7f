/** Local files of the transfer benchmarks: large inputs written once, and checks that outputs are complete. */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, statSync, writeSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const MIB = 1024 * 1024;

/** Writes `size` bytes of incompressible content to `path` (folders created), 1 MiB at a time. */
export function writeLargeFile(path, size) {
  mkdirSync(join(path, '..'), { recursive: true });
  const block = randomBytes(MIB);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < size; written += MIB)
      writeSync(fd, block, 0, Math.min(MIB, size - written));
  } finally {
    closeSync(fd);
  }
}

/**
 * The sizes of every file below `dir`, in any order, leaving out dot-files and dot-folders: where a command
 * keeps its own state (mission-data's `.mission-data/` in the data root), not the files it was asked for.
 */
function fileSizes(dir) {
  const sizes = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (
      !entry.isFile() ||
      relative(dir, path)
        .split(sep)
        .some((part) => part.startsWith('.'))
    )
      continue;
    sizes.push(statSync(path).size);
  }
  return sizes;
}

/**
 * Throws unless `dir` holds exactly `count` files, each of `size` bytes: a command that left out files or
 * wrote partial ones (or error bodies) was not measured doing the work. `label` names the command.
 */
export function checkFiles(label, dir, { count, size }) {
  const sizes = fileSizes(dir);
  const complete = sizes.filter((bytes) => bytes === size).length;
  if (sizes.length !== count || complete !== count) {
    throw new Error(
      `${label} left ${sizes.length} files in ${dir}, ${complete} of them of ${size} bytes; expected ${count}.`,
    );
  }
}
