/**
 * A slow data root (an NFS mount, a USB disk): every write of a part file takes 50 ms. The transfers slow down
 * with the disk, and no connection is reported stalled while the store was sending all along. The store runs
 * on a thread of its own, as a real one runs elsewhere: it keeps sending while this thread writes.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { downloadFiles } from '../../src/download/engine.js';
import { PartFile } from '../../src/download/part/part-file.js';
import { HttpClient } from '../../src/service/client.js';

const WRITE_MS = 50;
const OBJECT_BYTES = 16 * 1024 * 1024;
/** Parts of 4 MiB: each file over 4 connections, 16 at once, as a batch of large files is fetched. */
const PART_BYTES = 4 * 1024 * 1024;
const PATHS = [1, 2, 3, 4].map(
  (n) => `imap/mag/l1a/2024/01/imap_mag_l1a_norm_2024010${n}_2024010${n}_v01-00.cdf`,
);

/** The bytes of object `seed`: different at every offset and from object to object, cheap to make. */
function objectBytes(size: number, seed: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  for (let at = 0; at < size; at += 1) bytes[at] = (at * 31 + seed * 7 + (at >> 13)) & 0xff;
  return bytes;
}

/**
 * The service and its store: `/download/<path>` redirects to `/objects/<path>`, which serves the object whole
 * or by range, with an ETag and Accept-Ranges so that a large file is fetched in parts.
 */
const STORE = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const objectBytes = ${objectBytes.toString()};
const objects = new Map(workerData.paths.map((path, n) => [path, objectBytes(workerData.size, n + 1)]));
const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (url.startsWith('/download/')) {
    res.writeHead(302, { Location: '/objects/' + url.slice('/download/'.length) }).end();
    return;
  }
  const bytes = objects.get(url.slice('/objects/'.length));
  const range = /bytes=(\\d+)-(\\d*)/.exec(req.headers.range ?? '');
  parentPort.postMessage({ request: req.headers.range ?? 'whole' });
  if (!range) {
    res.writeHead(200, { 'Content-Length': bytes.length, 'Accept-Ranges': 'bytes', ETag: '"v1"' }).end(bytes);
    return;
  }
  const from = Number(range[1]);
  const to = range[2] === '' ? bytes.length - 1 : Math.min(Number(range[2]), bytes.length - 1);
  res.writeHead(206, {
    'Content-Length': to - from + 1,
    'Content-Range': 'bytes ' + from + '-' + to + '/' + bytes.length,
    ETag: '"v1"',
  }).end(bytes.subarray(from, to + 1));
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

describe('a data root whose writes take 50 ms each', () => {
  let store: Worker;
  let base: string;
  let dataDir: string;
  const objectRequests: string[] = [];

  beforeAll(async () => {
    store = new Worker(STORE, { eval: true, workerData: { paths: PATHS, size: OBJECT_BYTES } });
    const port = await new Promise<number>((resolve) => {
      store.on('message', (message: { port?: number; request?: string }) => {
        if (message.port !== undefined) resolve(message.port);
        if (message.request !== undefined) objectRequests.push(message.request);
      });
    });
    base = `http://127.0.0.1:${port}`;
    dataDir = await mkdtemp(join(tmpdir(), 'mission-slow-disk-'));
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await store.terminate();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('completes a batch of 4 files at a timeout of 1 s, with no stall reported', async () => {
    const write = PartFile.prototype.write;
    let writes = 0;
    vi.spyOn(PartFile.prototype, 'write').mockImplementation(function (this: PartFile, ...args) {
      writes += 1;
      // A synchronous write to a slow disk holds the thread as long as the disk takes.
      const until = performance.now() + WRITE_MS;
      while (performance.now() < until);
      return write.apply(this, args);
    });
    const failures: string[] = [];
    const client = new HttpClient({ url: base, retries: 0, retryBaseMs: 1 });
    try {
      const requests = requestSettings({
        timeoutMs: 1000,
        retries: 0,
        retryBaseMs: 1,
        log: (line) => {
          if (/failed/.test(line)) failures.push(line);
        },
      });
      // Four connections a file, fixed: a thread this busy would keep `auto` at one (see src/download/ranged/adaptive.ts).
      const results = await downloadFiles(client, PATHS, {
        requests,
        dataDir,
        partSize: PART_BYTES,
        connections: 4,
      });
      expect(results.map((result) => result.error?.message)).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(results.map((result) => result.status)).toEqual([
        'downloaded',
        'downloaded',
        'downloaded',
        'downloaded',
      ]);
    } finally {
      await client.close();
    }
    expect(failures).toEqual([]);
    // Each part asked once: no answer was given up as stalled and asked again.
    expect(objectRequests.length).toBe((OBJECT_BYTES / PART_BYTES) * PATHS.length);
    expect(writes).toBeGreaterThanOrEqual(PATHS.length * (OBJECT_BYTES / (1024 * 1024)));
    for (const [n, path] of PATHS.entries()) {
      expect((await readFile(join(dataDir, path))).equals(objectBytes(OBJECT_BYTES, n + 1)), path).toBe(true);
    }
  }, 60_000);
});
