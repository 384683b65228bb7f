/** Local files of the transfer benchmarks: large inputs written once, and checks that outputs are complete. */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
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

/** A folder in memory where the system has one for anyone (Linux's /dev/shm), tried before the temporary folder. */
const MEMORY_FOLDER = '/dev/shm';

/**
 * A new folder for the outputs of the batch cases: below MISSION_DATA_BENCH_BATCH_DIR when set, else in memory
 * (MEMORY_FOLDER) where the system has such a folder, else in the temporary folder. A batch writes thousands of
 * files into hundreds of new folders, and on a disk the cost of making each depends on what was deleted there
 * in the minutes before: on an ext4 without a journal, making a file scans past every inode freed in the last
 * minute (`recently_deleted` in the kernel's inode allocator), which took half of a batch's CPU and varied with
 * the order of the commands. In memory, each command's CPU is its own. The folder used is said in the results.
 */
export function batchFolder(prefix) {
  const base =
    process.env.MISSION_DATA_BENCH_BATCH_DIR || (writable(MEMORY_FOLDER) ? MEMORY_FOLDER : tmpdir());
  return mkdtempSync(join(base, prefix));
}

function writable(folder) {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
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
