/**
 * The floor of a Node batch download that does, per file, what mission-data must, on raw sockets: `node
 * bench/lib/bare-batch-checked.js BASE_URL OUT_DIR` reads storage paths from stdin and fetches each from
 * `BASE_URL/download/<path>` (following its redirect) through bench/lib/raw-get.js, 16 at a time, into the
 * archive's layout under OUT_DIR. For every file: a look at the destination (`lstat`), its folder made once and
 * looked at for a link at every file, a part file opened with O_EXCL and O_NOFOLLOW and written as the bytes
 * arrive, the CRC-32 of every byte checked against the `x-amz-checksum-crc32` the store states, the part's
 * `fstat` for the record, its rename into place, and a line of record per file, written 64 lines at a time.
 * Nothing else: no retries, timeouts, progress, resumption, other runs or case checks. With `--wire` after the
 * two arguments, the same work goes through mission-data's own wire client (bench/lib/wire-get.js) instead of
 * raw sockets: what the tool's HTTP layer adds, apart from the layers above it.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { rawClient } from './raw-get.js';

const [base, outDir, how] = process.argv.slice(2);
// The wire client is loaded only when asked for: the raw floor needs no build.
const newClient = how === '--wire' ? (await import('./wire-get.js')).wireClient : rawClient;
/** The stated CRC-32: from a raw head's text, or from the wire client's headers. */
const STATED = /\r\nx-amz-checksum-crc32: *([^\r]+)/i;
const statedOf = (head) => (typeof head === 'string' ? STATED.exec(head)?.[1] : head['x-amz-checksum-crc32']);
const keys = readFileSync(0, 'utf8').split('\n').filter(Boolean);
const CONCURRENCY = 16;
const RECORD_LINES = 64;
const PART_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
mkdirSync(join(outDir, '.state'), { recursive: true });
const record = openSync(join(outDir, '.state', 'record.jsonl'), 'a');
const folders = new Set();
let lines = [];

async function fetchOne(client, key) {
  const destination = join(outDir, ...key.split('/'));
  if (lstatSync(destination, { throwIfNoEntry: false })) throw new Error(`${destination} is there already`);
  const folder = dirname(destination);
  if (!folders.has(folder)) {
    mkdirSync(folder, { recursive: true });
    folders.add(folder);
  }
  if (lstatSync(folder).isSymbolicLink()) throw new Error(`${folder} is a link`);
  const part = `${destination}.part.${process.pid}`;
  const fd = openSync(part, PART_FLAGS, 0o644);
  let stated;
  let crc = 0;
  let position = 0;
  const status = await client.get(
    `${base}/download/${key}`,
    (chunk) => {
      crc = crc32(chunk, crc);
      position += writeSync(fd, chunk, 0, chunk.length, position);
    },
    (head) => {
      stated = statedOf(head);
    },
  );
  if (status !== 200) throw new Error(`GET ${key}: status ${status}`);
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc >>> 0);
  if (stated !== sum.toString('base64'))
    throw new Error(`${key}: CRC-32 ${sum.toString('base64')}, stated ${stated}`);
  const stats = fstatSync(fd);
  closeSync(fd);
  renameSync(part, destination);
  lines.push(
    `${JSON.stringify({ path: key, size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino, crc32: stated })}\n`,
  );
  if (lines.length >= RECORD_LINES) flush();
}

function flush() {
  if (lines.length > 0) writeSync(record, lines.join(''));
  lines = [];
}

let next = 0;
async function worker() {
  const client = newClient();
  while (next < keys.length) {
    const index = next++;
    await fetchOne(client, keys[index]);
  }
  client.close();
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
flush();
closeSync(record);
