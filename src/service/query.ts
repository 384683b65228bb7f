/**
 * A query answered in full: every page of a service that pages, one answer of one that does not, in the forms of
 * `latest` and paging this run has learned the service wants (see `dialect.ts`).
 */
import { ProtocolError, ValidationError } from '../core/errors.js';
import { ReusedBuffer } from '../http/body.js';
import type { ApiAnswer } from '../http/envelope.js';
import { apiError } from '../http/failures.js';
import type { MissionFile } from '../naming/names.js';
import { checkQueryParams, spiceQuerySearch } from '../naming/query-params.js';
import { QUERY_TABLES, type QueryParams, type QueryTable } from '../naming/query-vocabulary.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ServiceRoute } from './dialect.js';
import { latestAncillary } from './latest.js';
import { type QueryingService, queryRequest } from './query-request.js';
import {
  answerBounds,
  answerLength,
  type CheckedAnswer,
  checkQueryAnswer,
  checkQueryParts,
  type QueryPage,
  type ReceivedRecord,
} from './records.js';
import type { HttpQueryOptions } from './types.js';

/** The records' schemas, which word a refusal: loaded with the first query, not with the library. */
const recordSchemas = () => import('./record-schemas.js');

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

export type { QueryingService } from './query-request.js';

/** The records of `queryAnswerPages`, page by page. */
export async function* queryPages(
  service: QueryingService,
  params: QueryParams,
  options: HttpQueryOptions,
): AsyncGenerator<ReceivedRecord[], void, undefined> {
  for await (const page of queryAnswerPages(service, params, options)) yield page.records;
}

/**
 * The mission files of a query (see `queryAnswerPages`), a part of a page at a time as the check of its records
 * read them (a large page is parsed and checked a run of records at a time, as the loop takes them, so a caller
 * that keeps only what it needs of each file never holds a page): those of a naming form this version does not
 * read are left out, and a part may then be empty. A record refused throws after the parts before it.
 */
export async function* queryFilePages(
  service: QueryingService,
  params: QueryParams,
  options: HttpQueryOptions,
): AsyncGenerator<MissionFile[], void, undefined> {
  for await (const part of queryAnswerPages(service, params, options, 'parts')) {
    yield part.files.filter((file): file is MissionFile => file.kind !== 'unchecked');
  }
}

/**
 * GET /query (or, for the `spice` table, GET /spice-query), page by page (see `HttpClient.queryPages`): each page
 * is asked once the one before it has been taken, so a caller that writes each page as it comes holds one page at
 * a time. The newest ancillary versions are chosen here, from every version (today's service has no `latest` for
 * them): those pages are held to the end and handed over as one. No page handed over is empty. In `pages` form
 * each page is checked whole before it is handed over, and the callbacks are called before the last page is; in
 * `parts` form each page comes in the parts its check takes (see `checkQueryParts`), and the callbacks are
 * called once the last part has been taken.
 */
async function* queryAnswerPages(
  service: QueryingService,
  params: QueryParams,
  options: HttpQueryOptions,
  form: 'pages' | 'parts' = 'pages',
): AsyncGenerator<QueryPage, void, undefined> {
  const { signal, pageSize = DEFAULT_PAGE_SIZE, onNewerForms, onPossiblyCut } = options;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new ValidationError([
      `Invalid page size ${pageSize}: give a whole number from 1 to ${MAX_PAGE_SIZE}.`,
    ]);
  }
  const search = checkQueryParams(params);
  const table = (QUERY_TABLES as readonly string[]).includes(search.get('table') ?? '')
    ? (search.get('table') as QueryTable)
    : 'science';
  const latestHere = table === 'ancillary' && search.get('version') === 'latest';
  if (latestHere) search.delete('version');
  const asked = table === 'spice' ? spiceQuerySearch(search) : search;
  const query = new PagedQuery(service, asked, pageSize, signal, table, form);
  const held: QueryPage = { records: [], files: [] };
  const callBack = () => {
    if (query.newerForms > 0) onNewerForms?.(query.newerForms);
    const cut = query.possiblyCut();
    if (cut !== undefined) onPossiblyCut?.(cut);
  };
  for (;;) {
    // Nothing outside this loop holds a page: while the next one is asked for, the last is the caller's alone.
    const { parts, more } = await query.takePage();
    if (latestHere || form === 'pages') {
      const page = wholePage(parts);
      if (latestHere) {
        appendTo(held.records, page.records);
        appendTo(held.files, page.files);
      }
      if (!more) {
        // Called before the last page is handed over: a caller that stops there has heard them too.
        callBack();
        const last = latestHere ? latestAncillary(held) : page;
        if (last.records.length > 0) yield last;
        return;
      }
      if (!latestHere && page.records.length > 0) yield page;
      continue;
    }
    for (const part of parts) if (part.records.length > 0) yield part;
    if (!more) {
      callBack();
      return;
    }
  }
}

/** The parts of a page as one page. */
function wholePage(parts: Iterable<QueryPage>): QueryPage {
  let page: QueryPage | undefined;
  for (const part of parts) {
    if (page === undefined) page = part;
    else {
      appendTo(page.records, part.records);
      appendTo(page.files, part.files);
    }
  }
  return page ?? { records: [], files: [] };
}

/** Every record of a query at once (see `HttpClient.query`): its pages (`queryPages`) in one array. */
export async function queryAllPages(
  service: QueryingService,
  params: QueryParams,
  options: HttpQueryOptions,
): Promise<ReceivedRecord[]> {
  const records: ReceivedRecord[] = [];
  for await (const page of queryPages(service, params, options)) appendTo(records, page);
  return records;
}

/** Appends `page` to `records` one by one: spread into `push`, an unpaged answer of 200,000 records overflows the stack. */
function appendTo<T>(records: T[], page: readonly T[]): void {
  for (const record of page) records.push(record);
}

/** The first and last storage paths of a page, to tell a page sent twice. */
type PageBounds = { first: string; last: string };

/** A page taken: its records and files in the parts their check takes (none when it repeats one taken), and whether another page follows. */
interface TakenPage {
  parts: Iterable<QueryPage>;
  more: boolean;
}

/**
 * One query taken in page by page: how many records so far, what it learned of the service's paging on the way,
 * and the count of an unpaged answer (which may have been cut). Its pages' records are handed to the caller, not
 * kept.
 */
class PagedQuery {
  /** Records taken so far: the next page's offset. */
  count = 0;
  /** Records of naming forms this version does not check, among the parts checked so far. */
  newerForms = 0;
  #previous: PageBounds | undefined;
  /** Each page's bytes, read into one buffer: a page is taken whole before the next is asked for. */
  readonly #pageBytes = new ReusedBuffer();
  #unpagedAnswer: { count: number; total: number | undefined } | undefined;
  /** The size of a common cap the service's first short page showed, if any. */
  #cap: number | undefined;

  constructor(
    readonly service: QueryingService,
    readonly filters: URLSearchParams,
    readonly pageSize: number,
    readonly signal: AbortSignal | undefined,
    readonly table: QueryTable,
    /** `pages`: each page checked whole when it comes; `parts`: a run of records at a time as they are taken. */
    readonly form: 'pages' | 'parts',
  ) {}

  /** The route this query asks: `/spice-query` for the SPICE table, `/query` for the others. */
  get route(): ServiceRoute {
    return this.table === 'spice' ? 'spice-query' : 'query';
  }

  /**
   * Asks for the next page (or the one unpaged answer) and takes it: its records are counted and its bounds
   * compared here, and checked as its parts are taken.
   */
  async takePage(): Promise<TakenPage> {
    const { service, pageSize } = this;
    const page = service.choices.paging === 'no' ? undefined : { offset: this.count, limit: pageSize };
    const { url, answer, paged } = await queryRequest(service, this.route, this.filters, page, {
      signal: this.signal,
      reuse: this.#pageBytes,
      // Records taken a part at a time are parsed as they are taken; in `pages` form the page is parsed whole.
      scan: this.form === 'parts',
    });
    if (answer.status < 200 || answer.status > 299) throw this.#failure(url, answer);
    const { schemas } = await recordSchemas();
    const source = `GET ${url}`;
    // A body that is no list of records is refused here, before anything is counted.
    const firstIndex = paged ? this.count : 0;
    const checks =
      this.form === 'pages'
        ? [checkQueryAnswer(answer.body, source, schemas, firstIndex, this.table)]
        : checkQueryParts(answer.body, source, schemas, firstIndex, this.table);
    const received = answerLength(answer.body);
    const bounds = answerBounds(answer.body, source);
    const parts = this.#counted(checks);
    if (paged && (received > pageSize || sameBounds(bounds, this.#previous))) {
      return { parts: this.#pagingIgnored(url, received, parts, answer), more: false };
    }
    this.#take(received, paged ? undefined : answer);
    if (!paged || !this.#morePages(received, statedTotal(answer))) return { parts, more: false };
    if (this.count > pageSize && service.choices.paging === 'unknown') {
      service.learn('paging', 'yes', 'the service pages query answers');
    }
    this.#previous = bounds;
    return { parts, more: true };
  }

  /** The error of an answer that did not succeed: a 404 of `/spice-query` says the service keeps no SPICE table. */
  #failure(url: URL, answer: ApiAnswer) {
    if (this.route !== 'spice-query' || answer.status !== 404) return apiError('GET', url, answer);
    return apiError('GET', url, answer, {
      route: 'query',
      meaning:
        "the service has no /spice-query route: it keeps no SPICE table (the specification's service does not)",
    });
  }

  /** The count of an unpaged answer that looks capped (or says there were more), which may have been cut. */
  possiblyCut(): number | undefined {
    const answered = this.#unpagedAnswer;
    if (!answered) return undefined;
    const cut =
      answered.total !== undefined ? answered.total > answered.count : COMMON_CAPS.has(answered.count);
    return cut ? answered.count : undefined;
  }

  /** The parts of a page, each counting its records of newer naming forms as it is checked. */
  *#counted(checks: Iterable<CheckedAnswer>): Generator<QueryPage, void, undefined> {
    for (const checked of checks) {
      this.newerForms += checked.newerForms;
      yield { records: checked.records, files: checked.files };
    }
  }

  /** Counts a page's records; `unpaged`, the answer that holds them all, is kept to tell whether it was cut. */
  #take(received: number, unpaged?: ApiAnswer): void {
    this.count += received;
    if (unpaged) this.#unpagedAnswer = { count: received, total: statedTotal(unpaged) };
  }

  /**
   * A page longer than asked, or the same page twice: the service ignores offset and limit, so its first answer
   * held every record. Past the first page that is a broken answer, not a lesson. The records to take: the
   * first answer's, or none (a page sent twice).
   */
  #pagingIgnored(
    url: URL,
    received: number,
    parts: Iterable<QueryPage>,
    answer: ApiAnswer,
  ): Iterable<QueryPage> {
    if (this.count > 0 && received > this.pageSize) {
      throw new ProtocolError(
        `GET ${url}: asked for at most ${this.pageSize} records, got ${received} after ${this.count} paged ones.`,
      );
    }
    this.service.learn('paging', 'no', `the service ignores offset and limit: one unpaged query per search`);
    if (this.count > 0) return [];
    this.#take(received, answer);
    return parts;
  }

  /** Whether a page of `received` records leaves more to ask for, by the stated total or the page's size. */
  #morePages(received: number, total: number | undefined): boolean {
    // The first short page of a common cap's size sets the cap; a later page shorter than it is the last.
    if (this.#cap === undefined && received < this.pageSize && COMMON_CAPS.has(received)) {
      this.#cap = received;
    }
    if (received >= this.pageSize) return true;
    return total !== undefined ? total > this.count : this.#cap !== undefined && received >= this.#cap;
  }
}

/** True when two pages begin and end with the same records: a service that ignores `offset` sent one twice. */
function sameBounds(page: PageBounds | undefined, previous: PageBounds | undefined): boolean {
  return (
    page !== undefined &&
    previous !== undefined &&
    page.first === previous.first &&
    page.last === previous.last
  );
}
