/**
 * What the request log and the metrics say of each request: a request whose connection closed before its
 * answer ended never reads as a success (499, with the status already sent beside it, and `cut` when the stop
 * cut it off), and `bytes` is the body sent on every route.
 */
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatRequestLog, jsonRequestLog } from '../../src/cli/commands/serve-log.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import type { MetricSources } from '../../src/server/metrics.js';
import { ServerMetrics } from '../../src/server/metrics.js';
import {
  eventually,
  outcomeOf,
  pathOf,
  putStoreFile,
  rawRequest,
  startTestServer,
  type TestServer,
} from './helpers.js';

const NAME = 'imap_mag_l2_norm_20250302_20250302_v01-00.cdf';
const STORED = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm_20250110_20250110_v01-00.cdf';
const STORED_BYTES = Buffer.alloc(4 * 1024 * 1024, 3);

let test: TestServer | undefined;
afterEach(async () => {
  await test?.cleanup();
  test = undefined;
});

/** A server on a store holding `STORED`, logging into `log`. */
async function serveLogged(log: RequestLogEntry[]): Promise<TestServer> {
  test = await startTestServer({ log: (entry) => log.push(entry) }, (store) =>
    putStoreFile(store, STORED, STORED_BYTES),
  );
  return test;
}

/** Starts a PUT of `size` bytes to the upload URL of `NAME`, sends `sent` of them, and resolves once the store took some. */
async function startUpload(served: TestServer, size: number, sent: number) {
  const answer = await rawRequest(served.server.url, `/upload/${NAME}`);
  const url = new URL(outcomeOf(answer, 'envelope').body as string);
  const upload = httpRequest({
    host: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    method: 'PUT',
    agent: false,
    headers: { 'Content-Length': String(size) },
  });
  upload.on('error', () => undefined);
  upload.write(Buffer.alloc(sent, 'x'));
  const incoming = join(served.storeDir, '.incoming');
  expect(await eventually(async () => (await readdir(incoming)).length === 1)).toBe(true);
  return upload;
}

describe('a request whose answer did not end', () => {
  it('an upload the drain cuts off is logged 499, cut, with no status sent; the human and JSON lines say so', async () => {
    const log: RequestLogEntry[] = [];
    const served = await serveLogged(log);
    await startUpload(served, 8 * 1024 * 1024, 64 * 1024);
    const report = await served.server.drain(300);
    expect(report.cut).toBe(1);
    const put = log.find((entry) => entry.method === 'PUT');
    expect(put).toMatchObject({ route: '/objects/{key}', status: 499, aborted: true, cut: true, bytes: 0 });
    expect(put?.sentStatus).toBeUndefined();
    const entry = put as RequestLogEntry;
    expect(formatRequestLog(entry)).toMatch(
      /^PUT \/objects\/imap\/mag\/l2\/2025\/03\/\S+ 499 \(cut off when the server stopped\) \d+\.\dms id=[0-9a-f]{16}$/,
    );
    expect(JSON.parse(jsonRequestLog(entry))).toMatchObject({
      level: 'warn',
      status: 499,
      aborted: true,
      cut: true,
      bytes: 0,
    });
    expect(JSON.parse(jsonRequestLog(entry))).not.toHaveProperty('sentStatus');
  });

  it('an upload the client abandons is 499 and counted so in the metrics, by cause', async () => {
    const log: RequestLogEntry[] = [];
    const served = await serveLogged(log);
    const upload = await startUpload(served, 8 * 1024 * 1024, 64 * 1024);
    upload.destroy();
    expect(await eventually(async () => log.some((entry) => entry.method === 'PUT'))).toBe(true);
    const put = log.find((entry) => entry.method === 'PUT');
    expect(put).toMatchObject({ status: 499, aborted: true });
    expect(put?.cut).toBeUndefined();
    const metrics = (await rawRequest(served.server.url, '/metrics')).text;
    expect(metrics).toMatch(
      /^mission_data_http_requests_aborted_total\{route="\/objects\/\{key\}",method="PUT",cause="client"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^mission_data_http_requests_total\{route="\/objects\/\{key\}",method="PUT",status_class="4xx"\} 1$/m,
    );
    expect(metrics).not.toMatch(/^mission_data_http_requests_total\{[^}]*method="PUT"[^}]*"2xx"\}/m);
  });

  it('a download the client leaves after the headers keeps the 200 it sent as sentStatus, and reads as 499', async () => {
    const log: RequestLogEntry[] = [];
    const served = await serveLogged(log);
    const answer = await rawRequest(served.server.url, `/download/${STORED}`);
    const url = (outcomeOf(answer, 'envelope').body as { download_url: string }).download_url;
    await new Promise<void>((done) => {
      const get = httpRequest(`${served.server.url}${pathOf(url)}`, { agent: false }, (res) => {
        res.once('data', () => {
          get.destroy();
          done();
        });
      });
      get.on('error', () => undefined);
      get.end();
    });
    expect(await eventually(async () => log.some((entry) => entry.route === '/objects/{key}'))).toBe(true);
    const entry = log.find((logged) => logged.route === '/objects/{key}') as RequestLogEntry;
    expect(entry).toMatchObject({ status: 499, sentStatus: 200, aborted: true });
    expect(entry.bytes).toBeGreaterThan(0);
    expect(entry.bytes).toBeLessThanOrEqual(STORED_BYTES.length);
    expect(formatRequestLog(entry)).toMatch(/ 499 \(connection closed early; 200 sent\) /);
    expect(JSON.parse(jsonRequestLog(entry))).toMatchObject({ level: 'info', status: 499, sentStatus: 200 });
  });

  it('the metrics count a request the stop cut off under cause "stop", and as 4xx', async () => {
    const sources = {
      index: { pending: async () => [] },
      breaker: { outage: undefined },
      turns: { waiting: 0 },
      draining: () => true,
    } as unknown as MetricSources;
    const metrics = new ServerMetrics(sources);
    metrics.started();
    metrics.ended({ route: '/upload/{path}', method: 'GET', status: 499, durationMs: 3, aborted: 'stop' });
    const text = await metrics.text();
    expect(text).toMatch(
      /^mission_data_http_requests_aborted_total\{route="\/upload\/\{path\}",method="GET",cause="stop"\} 1$/m,
    );
    expect(text).toMatch(
      /^mission_data_http_requests_total\{route="\/upload\/\{path\}",method="GET",status_class="4xx"\} 1$/m,
    );
  });
});

describe('bytes', () => {
  it('is the body sent, on every route: API answers, refusals, /health, /metrics, objects; 0 for HEAD', async () => {
    const log: RequestLogEntry[] = [];
    const served = await serveLogged(log);
    const base = served.server.url;
    const download = await rawRequest(base, `/download/${STORED}`);
    const url = (outcomeOf(download, 'envelope').body as { download_url: string }).download_url;
    const answers = {
      query: await rawRequest(base, '/query?instrument=mag'),
      missing: await rawRequest(base, '/download/imap/mag/l1a/2025/01/none.cdf'),
      health: await rawRequest(base, '/health'),
      metrics: await rawRequest(base, '/metrics'),
      object: await rawRequest(base, pathOf(url)),
      unmatched: await rawRequest(base, '/nowhere'),
      head: await rawRequest(base, pathOf(url), { method: 'HEAD' }),
    };
    expect(answers.object.body.length).toBe(STORED_BYTES.length);
    expect(await eventually(async () => log.length === 8)).toBe(true);
    const [downloadEntry, ...rest] = log;
    expect(downloadEntry?.bytes).toBe(download.body.length);
    const byName = Object.fromEntries(Object.keys(answers).map((name, at) => [name, rest[at]]));
    for (const [name, answer] of Object.entries(answers)) {
      const entry = byName[name] as RequestLogEntry;
      expect({ name, bytes: entry.bytes }).toEqual({
        name,
        bytes: name === 'head' ? 0 : answer.body.length,
      });
      expect(entry.aborted).toBe(false);
      expect(entry.status).toBe(answer.status);
    }
    expect(answers.query.body.length).toBeGreaterThan(0);
    expect(answers.missing.status).toBe(404);
    expect(JSON.parse(jsonRequestLog(byName.query as RequestLogEntry)).bytes).toBe(answers.query.body.length);
  });
});
