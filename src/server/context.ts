/** What every route of the reference server works with. */
import type { IncomingMessage } from 'node:http';
import type { Breaker } from './breaker.js';
import type { UploadConfirmer } from './confirmations.js';
import type { Faults } from './faults.js';
import type { MetadataIndex } from './metadata/metadata-index.js';
import type { ObjectStore } from './objects/object-store.js';
import type { UrlSigner } from './objects/presign.js';
import type { Turns } from './turns.js';
import type { WireMode } from './wire.js';

/**
 * Which service the server plays: `spec` is exactly the published specification's (its parameters, words and
 * messages); `today` is the service as it runs now (routes also under `/api-key/` and `/authorized/`, uploads
 * only at `/api-key/upload`, `/spice-query`, the query's `repointing`, `major_version` and `minor_version`, words
 * of both generations, `latest=true` rather than `version=latest`, paging); `both` accepts everything either
 * accepts.
 */
export type Dialect = 'both' | 'spec' | 'today';

/** The dialects, for checking option values. */
export const DIALECTS: readonly Dialect[] = ['both', 'spec', 'today'];

/** Checks a credential: `missing` when none was given, `wrong` when it matches none, undefined when accepted. */
export type CredentialCheck = (given: string | undefined) => 'missing' | 'wrong' | undefined;

/** The server's state, shared by its routes. */
export interface ServerContext {
  store: ObjectStore;
  index: MetadataIndex;
  /** Answers the API routes 503 at once while a probe finds the store or the index not answering. */
  breaker: Breaker;
  /** Checks the URLs the object routes receive; undefined when the store signs its own URLs (no object routes). */
  signer: UrlSigner | undefined;
  /** Confirms uploads that go straight to the store; undefined when uploads pass through the server. */
  uploads: UploadConfirmer | undefined;
  /** Turns for `/upload` requests: a few at once while reads are answered, the others waiting theirs. */
  uploadTurns: Turns;
  /** Seconds an upload URL is valid. */
  uploadUrlLifetimeSeconds: number;
  /** How long after its URL expired a reservation whose object never came is released. */
  reservationGraceMs: number;
  wire: WireMode;
  dialect: Dialect;
  /** Checks the `X-api-key` of an upload or an `/api-key/` route; undefined when the server has no keys. */
  checkApiKey: CredentialCheck | undefined;
  /** Checks the bearer token of an `/authorized/` route; undefined when the server has no tokens (every one is refused). */
  checkToken: CredentialCheck | undefined;
  /** The base URL clients reached this server at, for the URLs it hands out. */
  baseUrl(req: IncomingMessage): string;
  /** The fault modes asked for (none by default): S3's and the network's behaviours, for tests. */
  faults: Faults;
  /** Keeps `work` on the list `close()` waits for, so an interrupted upload is cleaned up before close resolves. */
  track<T>(work: Promise<T>): Promise<T>;
}

/** How a route is reached: at the specification's path, under `/api-key/` or under `/authorized/`. */
export type RouteAccess = 'plain' | 'api-key' | 'authorized';

/** A request target split into its raw (still percent-encoded) path and its query. */
export interface RequestTarget {
  path: string;
  query: URLSearchParams;
  /** The raw query string, without `?`. */
  rawQuery: string;
}

/** Splits `req.url` without decoding or normalizing the path, so every check sees what the client sent. */
export function requestTarget(url: string): RequestTarget {
  let target = url;
  if (!target.startsWith('/')) {
    // Absolute form (`GET http://host/path`): keep only the path and query.
    const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(target);
    target = match?.[1] || '/';
  }
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const mark = target.indexOf('?');
  const path = mark >= 0 ? target.slice(0, mark) : target;
  const rawQuery = mark >= 0 ? target.slice(mark + 1) : '';
  return { path, query: new URLSearchParams(rawQuery), rawQuery };
}
