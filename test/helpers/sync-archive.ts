/**
 * An archive a sync can follow, in process: `/query` answers the files added so far (those ingested from
 * `ingestion_start_date` on, when asked), `/download` sends to an object store whose bytes carry their MD5.
 * Files are added between runs; `downloads()` names the files asked for.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { createClient, type MissionDataClient } from '../../src/api.js';
import { MswDispatcher } from './msw-dispatcher.js';

export const API = 'http://api.test';

/** A science file of mag on January day `day` of 2025, at `version`. */
export const magFile = (day: string, version = 'v01-00') =>
  `imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_202501${day}_202501${day}_${version}.cdf`;

const BYTES = 'file bytes';
const ETAG = `"${createHash('md5').update(BYTES).digest('hex')}"`;

/** One file the archive offers, with its ingestion date (`YYYY-MM-DD HH:MM:SS`) or none. */
interface Offered {
  path: string;
  ingestion: string | undefined;
}

export class SyncArchive {
  readonly #files: Offered[] = [];
  readonly dispatcher: MswDispatcher;

  constructor() {
    this.dispatcher = new MswDispatcher([
      http.get(`${API}/query`, ({ request }) => {
        const since = new URL(request.url).searchParams.get('ingestion_start_date');
        const day = (file: Offered) => file.ingestion?.slice(0, 10).replaceAll('-', '') ?? '';
        return HttpResponse.json(
          this.#files.filter((file) => since === null || day(file) >= since).map(record),
        );
      }),
      http.get(`${API}/download/*`, ({ request }) => {
        const key = new URL(request.url).pathname.slice('/download/'.length);
        const url = `http://store.test/objects/${key}`;
        return HttpResponse.json({
          statusCode: 302,
          headers: { Location: url },
          body: { download_url: url },
        });
      }),
      http.get(
        'http://store.test/objects/*',
        () => new HttpResponse(BYTES, { headers: { 'Content-Length': String(BYTES.length), ETag: ETAG } }),
      ),
    ]);
  }

  /** Adds a file, ingested at `ingestion` (none: a service whose records carry no ingestion date). */
  add(path: string, ingestion?: string): void {
    this.#files.push({ path, ingestion });
  }

  /** Takes a file out of the archive. */
  withdraw(path: string): void {
    const at = this.#files.findIndex((file) => file.path === path);
    if (at >= 0) this.#files.splice(at, 1);
  }

  /** The storage paths asked of `/download`, in order. */
  downloads(): string[] {
    return this.dispatcher.requests
      .filter((request) => request.url.startsWith(`${API}/download/`))
      .map((request) => decodeURIComponent(new URL(request.url).pathname.slice('/download/'.length)));
  }

  /** The `/query` URLs asked, in order. */
  queries(): string[] {
    return this.dispatcher.requests
      .filter((request) => request.url.startsWith(`${API}/query`))
      .map((request) => request.url);
  }

  /** A client of this archive with its data root below `home`. */
  client(home: string): MissionDataClient {
    return createClient({
      url: API,
      dataDir: join(home, 'data'),
      env: {},
      configFile: join(home, 'missing-config.json'),
      dispatcher: this.dispatcher,
      retryBaseMs: 1,
    });
  }
}

function record({ path, ingestion }: Offered) {
  return {
    file_path: path,
    instrument: 'mag',
    data_level: 'l1a',
    descriptor: 'norm-mago',
    start_date: path.slice(-28, -20),
    end_date: path.slice(-19, -11),
    version: path.slice(-10, -4),
    extension: 'cdf',
    ...(ingestion ? { ingestion_date: ingestion } : {}),
  };
}
