/**
 * The floor of a Node download on this machine, for scale in case 1: `node bench/lib/bare-download.js URL FILE
 * [--crc32]` fetches URL (following its redirect) over a raw socket reading into one reused buffer
 * (bench/lib/raw-get.js) and writes each read to a new FILE with `writeSync`; with `--crc32` it also takes the
 * CRC-32 of every byte as it lands (zlib's), the least a client that verifies what the reference server states
 * can do. It does nothing else that mission-data does: no part file, no name or folder checks, no record.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { rawClient } from './raw-get.js';

const [url, file, option] = process.argv.slice(2);
const verify = option === '--crc32';
const fd = openSync(file, 'w');
let position = 0;
let sum = 0;
const client = rawClient();
const status = await client.get(url, (chunk) => {
  if (verify) sum = crc32(chunk, sum);
  position += writeSync(fd, chunk, 0, chunk.length, position);
});
closeSync(fd);
client.close();
if (status !== 200) throw new Error(`GET ${url}: status ${status}`);
if (verify && process.env.BARE_PRINT_CRC32) console.log(sum.toString(16));
