/**
 * A database that stops answering (SIGSTOP of the whole PostgreSQL cluster): the API answers 503 with
 * Retry-After, the first requests within 3.5 s and every later one within 1 s, naming the index and how long it
 * has failed; 200 again within 2 s of SIGCONT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/server/index.js';
import { startPostgres } from '../helpers/backends.js';
import { cleanup, putFile, scienceName, tempDir } from '../helpers/e2e.js';
import { linuxOnly } from '../helpers/platform.js';

const SIGSTOP = linuxOnly('SIGSTOP');

let db: Awaited<ReturnType<typeof startPostgres>>;
let dir: string;
let server: ReferenceServer;
const name = scienceName('mag', 3);
const path = `imap/mag/l1a/2024/01/${name}`;

beforeAll(async () => {
  db = await startPostgres();
  dir = await tempDir('frozen-db-');
  await putFile(dir, name, 'bytes of one file');
  server = await startReferenceServer({ store: dir, indexUrl: db.url, wire: 'gateway' });
  await server.reindex(); // the file put in the folder before the index knew it
}, 60_000);
afterAll(async () => {
  db?.thaw();
  await server?.close();
  await db?.stop();
  await cleanup(dir);
});

/** One request's status, Retry-After, body and time taken. */
async function timed(route: string) {
  const started = Date.now();
  const answer = await fetch(`${server.url}${route}`, { redirect: 'manual' });
  const text = await answer.text();
  return {
    status: answer.status,
    retryAfter: answer.headers.get('retry-after'),
    text,
    ms: Date.now() - started,
  };
}

const QUERY = '/query?instrument=mag';
const DOWNLOAD = `/download/${path}`;

describe.skipIf(SIGSTOP.missing)(SIGSTOP.title('a frozen database'), () => {
  it('answers 503 with Retry-After at once, and 200 again soon after it thaws', async () => {
    expect((await timed(QUERY)).status).toBe(200);
    expect((await timed(DOWNLOAD)).status).toBe(302);

    db.freeze();
    // The first requests meet a closed breaker: they wait on the frozen database until a probe fails.
    const first = await Promise.all([timed(QUERY), timed(DOWNLOAD)]);
    for (const answer of first) {
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(3_500);
      expect(answer.retryAfter).toBe('5');
      expect(answer.text).toMatch(
        /^Service unavailable: The index postgres:\/\/test:\*\*\*@127\.0\.0\.1:\d+\/test did not answer within 3 s\. Failing for (under 1|\d) s; try again in 5 s\.$/,
      );
    }
    // Every later one is answered by the open breaker, at once, saying for how long.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    for (const route of [QUERY, DOWNLOAD, QUERY, DOWNLOAD]) {
      const later = await timed(route);
      expect(later.status).toBe(503);
      expect(later.ms).toBeLessThan(1_000);
      expect(later.retryAfter).toBe('5');
      expect(later.text).toMatch(/did not answer within 3 s\. Failing for [1-9]\d* s;/);
      expect(later.text).not.toContain(':test@');
    }
    const health = await timed('/health');
    expect(health.status).toBe(503);
    expect(health.ms).toBeLessThan(1_000);

    db.thaw();
    const thawed = Date.now();
    let answer = await timed(QUERY);
    while (answer.status !== 200 && Date.now() - thawed < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await timed(QUERY);
    }
    expect(answer.status).toBe(200);
    expect(Date.now() - thawed).toBeLessThan(2_000);
    expect(JSON.parse(answer.text)).toMatchObject([{ file_path: path }]);
    expect((await timed(DOWNLOAD)).status).toBe(302);
  }, 30_000);
});
