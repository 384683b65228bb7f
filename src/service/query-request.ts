/**
 * One query request in the forms of `latest` and paging this run has learned the service wants, learning from
 * the answer when it refuses one (see `dialect.ts`).
 */
import type { ReusedBuffer } from '../http/body.js';
import type { ApiAnswer } from '../http/envelope.js';
import { type DialectChoices, refusesParameter, type ServiceRoute } from './dialect.js';

/** What a query needs of the service client: the choices learned so far, and one call of a route. */
export interface QueryingService {
  readonly choices: Readonly<DialectChoices>;
  learn<Name extends keyof DialectChoices>(name: Name, value: DialectChoices[Name], why: string): void;
  /**
   * `reuse`: the buffer the answer's bytes may be read into, overwriting the last answer read into it; `scan`: a
   * large answer that is an array is kept as text, its records parsed a run at a time as they are taken (see
   * `readEnvelope`), for a caller that takes them so; otherwise it is parsed whole.
   */
  callRoute(
    route: ServiceRoute,
    rest: string,
    signal: AbortSignal | undefined,
    options: { reuse: ReusedBuffer; scan: boolean },
  ): Promise<{ url: URL; answer: ApiAnswer }>;
}

/**
 * One query request in the forms this run has learned, learning from a 400 that names a parameter: `offset` or
 * `limit` (the service does not page: asked again without them) or `version` (the service wants
 * `latest=true`: asked again in that form). Each lesson is taken once per run.
 */
export async function queryRequest(
  service: QueryingService,
  route: ServiceRoute,
  filters: URLSearchParams,
  page: { offset: number; limit: number } | undefined,
  { signal, reuse, scan }: { signal: AbortSignal | undefined; reuse: ReusedBuffer; scan: boolean },
): Promise<{ url: URL; answer: ApiAnswer; paged: boolean }> {
  let paged = page !== undefined;
  for (;;) {
    const search = new URLSearchParams(filters);
    const latestFlag = search.get('version') === 'latest' && service.choices.latest === 'latest=true';
    if (latestFlag) {
      search.delete('version');
      search.set('latest', 'true');
    }
    if (paged && page) {
      search.set('offset', String(page.offset));
      search.set('limit', String(page.limit));
    }
    const { url, answer } = await service.callRoute(route, `?${search}`, signal, { reuse, scan });
    if (answer.status !== 400) {
      if (filters.get('version') === 'latest' && answer.status >= 200 && answer.status <= 299) {
        service.learn(
          'latest',
          latestFlag ? 'latest=true' : 'version=latest',
          'latest versions asked as sent',
        );
      }
      return { url, answer, paged };
    }
    if (paged && service.choices.paging === 'unknown' && refusesParameter(answer, ['offset', 'limit'])) {
      service.learn('paging', 'no', 'the service refuses offset and limit: one unpaged query per search');
      paged = false;
      continue;
    }
    if (
      filters.get('version') === 'latest' &&
      service.choices.latest === 'unknown' &&
      refusesParameter(answer, ['version'])
    ) {
      service.learn('latest', 'latest=true', 'the service refuses version=latest: latest=true for this run');
      continue;
    }
    return { url, answer, paged };
  }
}
