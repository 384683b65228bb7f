/**
 * The reference server as today's archive client meets it (ARCHIVE-TODAY §3): `serve --wire gateway --dialect
 * today` answered in that client's own HTTP, request by request: the bare file name at `/api-key/upload/`, the
 * `x-api-key` header on every request (the PUT to the pre-signed URL included), unwrapped answers, a PUT with an
 * empty Content-Type, `repointing` as a number and `latest=true` in the query, and a download that follows the
 * redirect and writes the final body.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  bytesFor,
  cleanEnv,
  cleanup,
  type ServeProcess,
  spawnServe,
  tempDir,
} from '../helpers/e2e.js';

const KEY = 'today-client-key-0123456789';
const NAMES = [
  'imap_hi_l1b_45sensor-de_20250105-repoint00042_v001.0001.cdf',
  'imap_hi_l1b_45sensor-de_20250105-repoint00042_v001.0002.cdf',
  'imap_hi_l1b_45sensor-de_20250106-repoint00043_v001.0000.cdf',
];
const contentOf = (name: string) => bytesFor(name, 4096 + name.length);

let home: string;
let serve: ServeProcess;

/** A request as `requests` sends it for that client: the key on every request, the answer read unwrapped. */
function send(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('x-api-key', KEY);
  return fetch(url, { ...init, headers, redirect: 'follow' });
}

/** That client's `upload`: GET /api-key/upload/<file name> (a JSON string, the URL), then PUT the raw bytes. */
async function upload(name: string): Promise<void> {
  const answer = await send(`${serve.url}/api-key/upload/${name}`);
  expect(answer.status).toBe(200);
  const url = (await answer.json()) as unknown;
  expect(typeof url).toBe('string');
  const put = await send(url as string, {
    method: 'PUT',
    body: contentOf(name),
    headers: { 'Content-Type': '' },
  });
  expect(put.status).toBeGreaterThanOrEqual(200);
  expect(put.status).toBeLessThan(300);
}

beforeAll(async () => {
  assertBuilt();
  home = await tempDir('mission-today-client-');
  serve = await spawnServe(
    [
      '--port',
      '0',
      '--store',
      join(home, 'store'),
      '--wire',
      'gateway',
      '--dialect',
      'today',
      '--api-key',
      KEY,
    ],
    { cwd: home, env: cleanEnv(home) },
  );
  for (const name of NAMES) await upload(name);
}, 60_000);

afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exit;
  await cleanup(home);
});

describe("today's archive client against serve --wire gateway --dialect today", () => {
  it('queries with repointing as a number and latest=true, and reads unwrapped science records', async () => {
    const params = new URLSearchParams({
      table: 'science',
      instrument: 'hi',
      data_level: 'l1b',
      repointing: '42',
      latest: 'true',
    });
    const answer = await send(`${serve.url}/api-key/query?${params}`);
    expect(answer.status).toBe(200);
    const records = (await answer.json()) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({
      file_path: `imap/hi/l1b/2025/01/${NAMES[1]}`,
      instrument: 'hi',
      data_level: 'l1b',
      descriptor: '45sensor-de',
      start_date: '20250105',
      repointing: 42,
      cr: null,
      version: 'v001.0002',
      major_version: 1,
      minor_version: 2,
      extension: 'cdf',
    });
    // That client's printer takes a record with `end_date` for an ancillary one.
    expect(record).not.toHaveProperty('end_date');
    expect(typeof record?.ingestion_date).toBe('string');
  });

  it('gets every version without latest, and the version asked for with version=vNNN.NNNN', async () => {
    const all = await send(`${serve.url}/api-key/query?table=science&instrument=hi&repointing=42`);
    expect(((await all.json()) as unknown[]).length).toBe(2);
    const one = await send(`${serve.url}/api-key/query?table=science&instrument=hi&version=v001.0001`);
    const records = (await one.json()) as Array<{ file_path: string }>;
    expect(records.map((record) => record.file_path)).toEqual([`imap/hi/l1b/2025/01/${NAMES[0]}`]);
  });

  it('downloads by the full storage path, following the redirect to the bytes', async () => {
    for (const name of NAMES) {
      const answer = await send(`${serve.url}/api-key/download/imap/hi/l1b/2025/01/${name}`);
      expect(answer.status).toBe(200);
      expect(Buffer.from(await answer.arrayBuffer())).toEqual(contentOf(name));
    }
  });

  it('refuses a bad query parameter with a 400 and the reason as the body', async () => {
    const answer = await send(`${serve.url}/api-key/query?table=science&repointing=forty-two`);
    expect(answer.status).toBe(400);
    expect(await answer.text()).toMatch(/repointing/);
  });
});
