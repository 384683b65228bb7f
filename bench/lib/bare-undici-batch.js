/**
 * The undici floor of a Node batch download (a reference row beside the raw-socket floor of bare-batch.js): `node bench/lib/bare-undici-batch.js BASE_URL OUT_DIR`
 * reads storage paths from stdin and fetches each from `BASE_URL/download/<path>` (following its redirect) with
 * undici's `request`, 16 at a time, writing file `f<i>` in OUT_DIR with one `writev`. It does nothing else that
 * mission-data does: no checksum, no part file, no name, folder or link checks, no record, no progress.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';

const [base, outDir] = process.argv.slice(2);
const keys = readFileSync(0, 'utf8').split('\n').filter(Boolean);
const CONCURRENCY = 16;
mkdirSync(outDir, { recursive: true });

let next = 0;
async function worker() {
  while (next < keys.length) {
    const index = next++;
    const url = `${base}/download/${keys[index]}`;
    let answer = await request(url);
    if (answer.statusCode >= 300 && answer.statusCode < 400) {
      await answer.body.dump();
      answer = await request(new URL(String(answer.headers.location), url).href);
    }
    if (answer.statusCode !== 200) throw new Error(`GET ${url}: status ${answer.statusCode}`);
    const chunks = [];
    for await (const chunk of answer.body) chunks.push(chunk);
    const fd = openSync(join(outDir, `f${index}`), 'w');
    writevSync(fd, chunks);
    closeSync(fd);
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
