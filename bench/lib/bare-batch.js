/**
 * The floor of a Node batch download on this machine, for scale in case 2: `node bench/lib/bare-batch.js
 * BASE_URL OUT_DIR` reads storage paths from stdin and fetches each from `BASE_URL/download/<path>` (following
 * its redirect) over raw sockets reading into one reused buffer each (bench/lib/raw-get.js), 16 at a time,
 * writing file `f<i>` in OUT_DIR as its bytes arrive. It does nothing else that mission-data does: no checksum,
 * no part file, no name, folder or link checks, no record, no progress.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { rawClient } from './raw-get.js';

const [base, outDir] = process.argv.slice(2);
const keys = readFileSync(0, 'utf8').split('\n').filter(Boolean);
const CONCURRENCY = 16;
mkdirSync(outDir, { recursive: true });

let next = 0;
async function worker() {
  const client = rawClient();
  while (next < keys.length) {
    const index = next++;
    const url = `${base}/download/${keys[index]}`;
    const fd = openSync(join(outDir, `f${index}`), 'w');
    let position = 0;
    const status = await client.get(url, (chunk) => {
      position += writeSync(fd, chunk, 0, chunk.length, position);
    });
    closeSync(fd);
    if (status !== 200) throw new Error(`GET ${url}: status ${status}`);
  }
  client.close();
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
