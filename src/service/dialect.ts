/**
 * Which service the client talks to: the specification's, or the service as it runs today (routes under
 * `/api-key/` and `/authorized/`, `latest=true` instead of `version=latest`, `offset`/`limit` paging). The client
 * never asks which: it tries one form and learns from the answer, at most one extra request per choice and run.
 */
import type { ApiAnswer } from '../http/envelope.js';
import { messageOf } from '../http/envelope.js';

/** The service's API routes (`spice-query`: today's service only, for the SPICE table). */
export type ServiceRoute = 'upload' | 'download' | 'query' | 'spice-query';

/** What a run has learned; `unknown` until an answer has told. */
export interface DialectChoices {
  /** Whether the service has the `/api-key/` and `/authorized/` routes (the specification's has none). */
  prefixedRoutes: 'unknown' | 'yes' | 'no';
  /** How the service wants the most recent versions: `version=latest` (specification) or `latest=true` (today). */
  latest: 'unknown' | 'version=latest' | 'latest=true';
  /** Whether the service answers `offset`/`limit` pages (`no`: it refuses or ignores them). */
  paging: 'unknown' | 'yes' | 'no';
}

/** Credentials a client holds; each goes on every request to the service, never to the object store. */
export interface ServiceCredentials {
  apiKey?: string | undefined;
  token?: string | undefined;
}

/** The query answers' page size when none is given: the most the reference service allows per page. */
export const DEFAULT_PAGE_SIZE = 10_000;

/** The largest page size the client asks for (today's service refuses larger `limit`s). */
export const MAX_PAGE_SIZE = 10_000;

/** The choices of a run that has learned nothing yet. */
export function freshChoices(): DialectChoices {
  return { prefixedRoutes: 'unknown', latest: 'unknown', paging: 'unknown' };
}

/**
 * The route prefix a request tries first. A bearer token goes to `/authorized/`, an API key to `/api-key/`; when
 * both are set, uploads go to `/api-key/` (today's production takes uploads nowhere else) and the rest to
 * `/authorized/`. Without credentials, or once the service has shown it has no prefixed routes: none.
 */
export function routePrefix(
  route: ServiceRoute,
  credentials: ServiceCredentials,
  choices: DialectChoices,
): '' | '/api-key' | '/authorized' {
  if (choices.prefixedRoutes === 'no') return '';
  if (credentials.apiKey && (route === 'upload' || !credentials.token)) return '/api-key';
  if (credentials.token) return '/authorized';
  return '';
}

/** The headers carrying the credentials: `X-api-key` and `Authorization: Bearer`. */
export function credentialHeaders(credentials: ServiceCredentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credentials.apiKey) headers['x-api-key'] = credentials.apiKey;
  if (credentials.token) headers.authorization = `Bearer ${credentials.token}`;
  return headers;
}

/**
 * Decides what a 404 of a prefixed route, then the answer of the plain route, say: the same 404 from both means
 * one handler answered both (a file that is missing, behind a prefix that exists); any other pair means the
 * prefix is what was missing, as on the specification's service.
 */
export function prefixedRoutesExist(prefixed: ApiAnswer, plain: ApiAnswer): boolean {
  return plain.status === 404 && messageOf(plain) === messageOf(prefixed);
}

/**
 * True when a 400 answer names one of `parameters` as the thing refused. Only the part of the message before a
 * list of valid parameters counts: today's service lists `offset` and `limit` among the valid ones.
 */
export function refusesParameter(answer: ApiAnswer, parameters: readonly string[]): boolean {
  if (answer.status !== 400) return false;
  const head = messageOf(answer).split(/valid (?:query )?parameters (?:are|:)/i)[0] ?? '';
  return parameters.some((name) => new RegExp(`(?:^|[^A-Za-z0-9_])${name}(?:[^A-Za-z0-9_]|$)`).test(head));
}
