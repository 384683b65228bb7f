/**
 * The code of one hashing thread of `FileHashPool` (`hash-pool.ts`), run with `eval`: it takes jobs in batches
 * and answers in batches, so that a thread hashing small files never waits for the main thread between them.
 *
 * A job: `{ id, path, algorithm, size }`. With `size` (the size the record expects), the thread first measures the
 * file by its path (not following a link) and answers `{ id, differs: true, size }` without reading it when the
 * size is another, or `{ id, error, code, measuring: true }` when it cannot be measured. Then it opens the file
 * (never through a link), reads it through once in reads of HASH_READ_BYTES, and answers with the digest and the
 * stats of the very descriptor it read: `{ id, digest, size, mtimeMs, ino }`, or `{ id, error, code }`.
 * `{ id, progress }` tells how far a large file got, every 32 MiB.
 *
 * Answers are sent once 4 MiB of files were read since the last ones, before a progress line, and at the end of
 * each batch: one message per file of 4 MiB or more, one per few files of 1 MiB, one per batch of small files (the
 * pool keeps more than that in a thread's hands, so it never runs dry while the answers travel).
 */
import { HASH_READ_BYTES } from './checksum.js';

export const HASH_THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, readSync, fstatSync, lstatSync, closeSync, constants } = require('node:fs');
const { createHash } = require('node:crypto');
const { crc32 } = require('node:zlib');
const buffer = Buffer.allocUnsafe(${HASH_READ_BYTES});
const REPORT_EVERY = 32 * 1024 * 1024;
const ANSWER_EVERY = 4 * 1024 * 1024;
let answers = [];
let unsent = 0;
function send() {
  if (answers.length === 0) return;
  parentPort.postMessage(answers);
  answers = [];
  unsent = 0;
}
function failure(id, error, measuring) {
  return { id, error: String((error && error.message) || error), code: error && error.code, measuring };
}
function hashOne({ id, path, algorithm, size: expected }) {
  if (expected !== undefined) {
    let measured;
    try {
      measured = lstatSync(path);
    } catch (error) {
      return failure(id, error, true);
    }
    if (measured.size !== expected) return { id, differs: true, size: measured.size };
  }
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW || 0));
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
    const hash = algorithm === 'crc32' ? undefined : createHash(algorithm);
    let crc = 0;
    let position = 0;
    let reported = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) break;
      const chunk = buffer.subarray(0, read);
      if (hash) hash.update(chunk);
      else crc = crc32(chunk, crc);
      position += read;
      if (position - reported >= REPORT_EVERY) {
        send();
        parentPort.postMessage([{ id, progress: position - reported }]);
        reported = position;
      }
    }
    let digest;
    if (hash) digest = new Uint8Array(hash.digest());
    else { digest = new Uint8Array(4); new DataView(digest.buffer).setUint32(0, crc >>> 0); }
    unsent += position - reported;
    return { id, progress: position - reported, digest, size: position, mtimeMs: stats.mtimeMs, ino: stats.ino };
  } catch (error) {
    return failure(id, error, false);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
parentPort.on('message', (jobs) => {
  for (const job of jobs) {
    answers.push(hashOne(job));
    if (unsent >= ANSWER_EVERY) send();
  }
  send();
});
`;
