/**
 * The floor of a Node download on this machine, for scale in case 1: `node bench/lib/bare-download.js URL FILE`
 * fetches URL (following its redirect) over a raw socket reading into one reused buffer (bench/lib/raw-get.js)
 * and writes each read to a new FILE with `writeSync`. It does nothing else that mission-data does: no checksum,
 * no part file, no name or folder checks, no record.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { rawClient } from './raw-get.js';

const [url, file] = process.argv.slice(2);
const fd = openSync(file, 'w');
let position = 0;
const client = rawClient();
const status = await client.get(url, (chunk) => {
  position += writeSync(fd, chunk, 0, chunk.length, position);
});
closeSync(fd);
client.close();
if (status !== 200) throw new Error(`GET ${url}: status ${status}`);
