/**
 * A transfer over many connections listens for its batch's cancel without Node warning of a listener leak: 64
 * connections opened at once, each listening to the one signal while it connects, stay under the signal's limit.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSettings } from '../../src/core/call-settings.js';
import { downloadFiles } from '../../src/download/engine.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { HttpClient } from '../../src/service/client.js';
import { makeTempDir, putStoreFile, startTestServer, type TestServer } from '../server/helpers.js';

const PATH = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240103_20240103_v01-00.cdf';
const BODY = randomBytes(6 * 1024 * 1024 + 5);

let test: TestServer;
const log: RequestLogEntry[] = [];

beforeAll(async () => {
  test = await startTestServer({ log: (entry) => log.push(entry) }, (storeDir) =>
    putStoreFile(storeDir, PATH, BODY),
  );
});

afterAll(async () => {
  await test?.cleanup();
});

describe("a transfer's abort listeners", () => {
  it('stay under the limit over 64 connections opened at once, and the file lands whole', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const dataDir = await makeTempDir('mission-listeners-');
    const http = new HttpClient({ url: test.server.url, retryBaseMs: 1 });
    const controller = new AbortController();
    try {
      const [result] = await downloadFiles(http, [PATH], {
        requests: requestSettings({ retryBaseMs: 1 }),
        dataDir,
        signal: controller.signal,
        partSize: 64 * 1024,
        connections: 64,
      });
      expect(result).toMatchObject({ status: 'downloaded', verified: true });
      expect((await readFile(join(dataDir, PATH))).equals(BODY)).toBe(true);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
      await http.close();
      await rm(dataDir, { recursive: true, force: true });
    }
    const ranged = log.filter((entry) => entry.method === 'GET' && entry.path.startsWith('/objects/'));
    expect(ranged.length).toBeGreaterThan(64);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  });
});
