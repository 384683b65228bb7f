/**
 * A query answered in full: every page of a service that pages, one answer of one that does not, in the forms of
 * `latest` and paging this run has learned the service wants (see `dialect.ts`).
 */
import { ProtocolError, ValidationError } from '../core/errors.js';
import type { ApiAnswer } from '../http/envelope.js';
import { apiError } from '../http/failures.js';
import { checkQueryParams, type QueryParams } from '../naming/query-vocabulary.js';
import {
  DEFAULT_PAGE_SIZE,
  type DialectChoices,
  MAX_PAGE_SIZE,
  refusesParameter,
  type ServiceRoute,
} from './dialect.js';
import { checkQueryAnswer, type ReceivedRecord } from './records.js';
import type { HttpQueryOptions } from './types.js';

/**
 * Page sizes services cap their answers at without saying so. A page of exactly one of these sizes, smaller
 * than the page asked for, may be a cut answer: the next page is asked for (an empty one ends the query).
 */
const COMMON_CAPS: ReadonlySet<number> = new Set([100, 200, 250, 500, 1000, 2000, 2500, 5000]);

/** The total a service states for the whole answer (`X-Total-Count`), if any. */
function statedTotal(answer: ApiAnswer): number | undefined {
  const value = answer.headers['x-total-count'];
  return value !== undefined && /^\d{1,12}$/.test(value.trim()) ? Number(value) : undefined;
}

/** What a query needs of the service client: the choices learned so far, and one call of a route. */
export interface QueryingService {
  readonly choices: Readonly<DialectChoices>;
  learn<Name extends keyof DialectChoices>(name: Name, value: DialectChoices[Name], why: string): void;
  callRoute(
    route: ServiceRoute,
    rest: string,
    signal: AbortSignal | undefined,
  ): Promise<{ url: URL; answer: ApiAnswer }>;
}

/** GET /query, every page of it (see `HttpClient.query`). */
export async function queryAllPages(
  service: QueryingService,
  params: QueryParams,
  options: HttpQueryOptions,
): Promise<ReceivedRecord[]> {
  const { signal, pageSize = DEFAULT_PAGE_SIZE, onNewerForms, onPossiblyCut } = options;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new ValidationError([
      `Invalid page size ${pageSize}: give a whole number from 1 to ${MAX_PAGE_SIZE}.`,
    ]);
  }
  const filters = checkQueryParams(params);
  const records: ReceivedRecord[] = [];
  let newerForms = 0;
  let previous: { first: string; last: string } | undefined;
  let unpagedAnswer: { count: number; total: number | undefined } | undefined;
  let cap: number | undefined;
  for (;;) {
    const page = service.choices.paging === 'no' ? undefined : { offset: records.length, limit: pageSize };
    const { url, answer, paged } = await queryRequest(service, filters, page, signal);
    if (answer.status < 200 || answer.status > 299) throw apiError('GET', url, answer);
    const checked = checkQueryAnswer(answer.body, `GET ${url}`, paged ? records.length : 0);
    const received = checked.records;
    const bounds =
      received.length > 0
        ? { first: received[0]?.file_path ?? '', last: received.at(-1)?.file_path ?? '' }
        : undefined;
    if (paged && (received.length > pageSize || sameBounds(bounds, previous))) {
      if (records.length > 0 && received.length > pageSize) {
        throw new ProtocolError(
          `GET ${url}: asked for at most ${pageSize} records, got ${received.length} after ${records.length} paged ones.`,
        );
      }
      // The service ignores offset and limit: its first answer held every record.
      service.learn('paging', 'no', `the service ignores offset and limit: one unpaged query per search`);
      if (records.length === 0) {
        records.push(...received);
        newerForms += checked.newerForms;
        unpagedAnswer = { count: received.length, total: statedTotal(answer) };
      }
      break;
    }
    records.push(...received);
    newerForms += checked.newerForms;
    if (!paged) {
      unpagedAnswer = { count: received.length, total: statedTotal(answer) };
      break;
    }
    const total = statedTotal(answer);
    // The first short page of a common cap's size sets the cap; a later page shorter than it is the last.
    if (cap === undefined && received.length < pageSize && COMMON_CAPS.has(received.length)) {
      cap = received.length;
    }
    const more =
      received.length >= pageSize ||
      (total !== undefined ? total > records.length : cap !== undefined && received.length >= cap);
    if (!more) break;
    if (records.length > pageSize && service.choices.paging === 'unknown') {
      service.learn('paging', 'yes', 'the service pages query answers');
    }
    previous = bounds;
  }
  if (newerForms > 0) onNewerForms?.(newerForms);
  // A service that cannot page and answered with a capped-looking count (or said there were more) may have cut it.
  if (
    unpagedAnswer &&
    (unpagedAnswer.total !== undefined
      ? unpagedAnswer.total > unpagedAnswer.count
      : COMMON_CAPS.has(unpagedAnswer.count))
  ) {
    onPossiblyCut?.(unpagedAnswer.count);
  }
  return records;
}

/**
 * One query request in the forms this run has learned, learning from a 400 that names a parameter: `offset` or
 * `limit` (the service does not page: asked again without them) or `version` (the service wants
 * `latest=true`: asked again in that form). Each lesson is taken once per run.
 */
async function queryRequest(
  service: QueryingService,
  filters: URLSearchParams,
  page: { offset: number; limit: number } | undefined,
  signal: AbortSignal | undefined,
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
    const { url, answer } = await service.callRoute('query', `?${search}`, signal);
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

/** True when two pages begin and end with the same records: a service that ignores `offset` sent one twice. */
function sameBounds(
  page: { first: string; last: string } | undefined,
  previous: { first: string; last: string } | undefined,
): boolean {
  return (
    page !== undefined &&
    previous !== undefined &&
    page.first === previous.first &&
    page.last === previous.last
  );
}
