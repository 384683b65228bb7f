/**
 * The floor of a Node `verify`: `node bench/lib/bare-verify.js ROOT [THREADS]` reads the data root's record of
 * verified files (`ROOT/.mission-data/verified.jsonl`, the last line of each path), lists the root (every folder
 * read, regular files kept), and hashes each listed file the record holds on THREADS worker threads (2 by default,
 * as `verify` has): opened without following links, measured by fstat, read through in reads of 256 KiB into one
 * buffer per thread, its digest compared with the record's. The files are dealt to the threads in turn, in the
 * listing's order. Prints how many files matched and how many did not, and exits 1 when any did not. Nothing
 * else: no query of the archive, no name read by the naming rules, no line written to the record, no progress,
 * no process start-up beyond Node's own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const [root, threadsText = '2'] = process.argv.slice(2);
if (!root) {
  console.error('Usage: node bench/lib/bare-verify.js ROOT [THREADS]');
  process.exit(2);
}
const threads = Math.max(1, Number(threadsText));

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { closeSync, constants, fstatSync, openSync, readSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { crc32 } = require('node:zlib');
const buffer = Buffer.allocUnsafe(256 * 1024);
let matched = 0;
let differed = 0;
for (const { path, algorithm, hex } of workerData) {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  fstatSync(fd);
  const hash = algorithm === 'crc32' ? undefined : createHash(algorithm);
  let crc = 0;
  let position = 0;
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, position);
    if (read === 0) break;
    if (hash) hash.update(buffer.subarray(0, read));
    else crc = crc32(buffer.subarray(0, read), crc);
    position += read;
  }
  closeSync(fd);
  const digest = hash ? hash.digest('hex') : (crc >>> 0).toString(16).padStart(8, '0');
  if (digest === hex) matched += 1;
  else differed += 1;
}
parentPort.postMessage({ matched, differed });
`;

/** The record's last line of each path: its algorithm and hex digest. */
function readRecord(file) {
  const sums = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{"p":')) continue;
    try {
      const entry = JSON.parse(line);
      const at = entry.sum.indexOf(':');
      sums.set(entry.p, { algorithm: entry.sum.slice(0, at), hex: entry.sum.slice(at + 1) });
    } catch {
      // A damaged line vouches for nothing.
    }
  }
  return sums;
}

/** The regular files below `folder` (the state folder left out), by storage path. */
function list(folder, prefix, found) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) list(join(folder, entry.name), path, found);
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

const sums = readRecord(join(root, '.mission-data', 'verified.jsonl'));
const shares = Array.from({ length: threads }, () => []);
let dealt = 0;
for (const path of list(root, '', [])) {
  const sum = sums.get(path);
  if (sum) shares[dealt++ % threads].push({ path: join(root, path), ...sum });
}
const counts = await Promise.all(
  shares.map(
    (share) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: share });
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  ),
);
const matched = counts.reduce((sum, count) => sum + count.matched, 0);
const differed = counts.reduce((sum, count) => sum + count.differed, 0);
console.log(`${matched} matched, ${differed} differed`);
if (differed > 0) process.exitCode = 1;
