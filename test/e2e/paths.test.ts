/**
 * Paths that a proxy or an object store may normalize (`..;`, dot-led segments, empty segments, backslashes,
 * control characters, percent-encoded bytes) are refused by the command before any request, naming the segment.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanup, runCli, tempDir } from '../helpers/e2e.js';

let home: string;
let service: Server;
let url: string;
let requests = 0;

beforeAll(async () => {
  assertBuilt();
  home = await tempDir();
  // Anything that reaches this "service" is a request the command should never have sent.
  service = createServer((_req, res) => {
    requests += 1;
    res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"statusCode":404,"body":"no"}');
  });
  await new Promise<void>((done) => service.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((done) => service.close(done));
  await cleanup(home);
});

describe('download refuses a path a proxy or store could rewrite, before any request', () => {
  it.each([
    ['imap/..;/..;/outside.cdf', 'its segment "..;" starts with a dot'],
    ['imap/mag/.hidden/x.cdf', 'its segment ".hidden" starts with a dot'],
    ['imap/mag/.../x.cdf', 'its segment "..." starts with a dot'],
    ['imap/mag//l1a/x.cdf', 'empty segment'],
    ['imap\\mag\\x.cdf', 'backslash'],
    ['imap/m\u0007ag/x.cdf', 'control character in the segment "m\\u0007ag"'],
    ['imap/mag/%2e%2e/x.cdf', "'..' segment once percent-decoded"],
    ['imap/mag/x%41.cdf', `'%' in the segment "x%41.cdf"`],
  ])('%j', async (path, reason) => {
    const before = requests;
    const run = await runCli(['download', path, '--url', url], { cwd: home });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(reason);
    expect(requests).toBe(before);
  });
});
