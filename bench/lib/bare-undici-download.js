/**
 * The undici floor of a Node download (a reference row beside the raw-socket floor of bare-download.js): `node bench/lib/bare-undici-download.js URL FILE` fetches URL
 * (following one redirect) with undici's `request` and writes the body to FILE in ~1 MiB `writev` batches. It
 * does nothing else that mission-data does: no checksum, no part file, no name or folder checks, no record.
 */
import { closeSync, openSync, writevSync } from 'node:fs';
import { request } from 'undici';

const [url, file] = process.argv.slice(2);
const BATCH_BYTES = 1024 * 1024;

let answer = await request(url);
if (answer.statusCode >= 300 && answer.statusCode < 400) {
  await answer.body.dump();
  answer = await request(new URL(String(answer.headers.location), url).href, { highWaterMark: BATCH_BYTES });
}
if (answer.statusCode !== 200) throw new Error(`GET ${url}: status ${answer.statusCode}`);
const fd = openSync(file, 'w');
let batch = [];
let batched = 0;
let position = 0;
for await (const chunk of answer.body) {
  batch.push(chunk);
  batched += chunk.length;
  if (batched >= BATCH_BYTES) {
    position += writevSync(fd, batch, position);
    batch = [];
    batched = 0;
  }
}
if (batch.length > 0) writevSync(fd, batch, position);
closeSync(fd);
