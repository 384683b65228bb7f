/**
 * `mission-data query`: finds files by their metadata and prints them as a table, JSON or CSV. JSON and CSV are
 * written page by page as the service answers, so memory holds one page whatever the size of the answer; the
 * table waits for every record, as its columns are as wide as their widest cell.
 */

import type { QueryOptions, ReceivedRecord } from '../../api.js';
import { UsageError } from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { caseHint, refuseFiltersOfOtherTables, requiredFilters } from '../options.js';
import {
  csvColumns,
  csvField,
  formatTable,
  foundLine,
  OUTPUT_FORMATS,
  type OutputFormat,
} from '../output.js';
import { newerFormsWarning, possiblyCutWarning } from '../query-warnings.js';
import { JsonArrayPieces, RESULTS_PER_PIECE, ResultsOut } from '../results-out.js';

/** The options commander hands to `query`. */
export interface QueryCommandOptions extends GlobalOptions, QueryFilters {
  outputFormat?: OutputFormat | undefined;
  /** Records asked per page of a service that pages; the library's default when left out. */
  pageSize?: number | undefined;
}

/** Runs `query`: checks every value before any request, then prints the matching records on stdout. */
export async function query(options: QueryCommandOptions, io: CommandIO): Promise<number> {
  const format = options.outputFormat ?? 'table';
  if (!OUTPUT_FORMATS.includes(format)) {
    throw new UsageError(
      `Invalid --output-format ${JSON.stringify(format)}. Choose from ${OUTPUT_FORMATS.join(', ')}.`,
    );
  }
  const filters = requiredFilters(options, 'query --instrument mag --start-date 20250101');
  refuseFiltersOfOtherTables(filters);
  const client = clientFor(options, io);
  // ora is loaded only when a spinner will show: pipes and scripts never pay for it. A terminal that reports
  // no width (a bare pseudo-terminal) gets no spinner: ora cannot measure what it must erase there.
  const spinner =
    io.stderr.isTTY && (io.stderr.columns ?? 0) > 0 && !options.quiet && !options.debug
      ? (await import('ora'))
          // ora decides whether it animates (TTY, TERM not dumb, no CI): its own rule, as the transfer line follows.
          .default({ text: 'Querying…', stream: io.stderr, discardStdin: false })
          .start()
      : undefined;
  try {
    let newerForms = 0;
    let cutAt: number | undefined;
    const queryOptions: QueryOptions = {
      signal: io.signal,
      pageSize: options.pageSize,
      onNewerForms: (count) => {
        newerForms = count;
      },
      onPossiblyCut: (returned) => {
        cutAt = returned;
      },
    };
    const notices = (count: number) => {
      // Nothing matched a value in another case than the archive's: say so, whatever the format.
      const hint = count === 0 && !options.quiet ? caseHint(filters) : undefined;
      if (hint) io.stderr.write(`Hint: ${hint}\n`);
      if (newerForms > 0 && !options.quiet) io.stderr.write(newerFormsWarning(newerForms));
      // Shown even with --quiet: a result that may be incomplete is not noise.
      if (cutAt !== undefined) io.stderr.write(possiblyCutWarning(cutAt));
    };
    if (format !== 'table') {
      const pages = client.queryPages(filters, queryOptions);
      // The spinner goes before the first write: stdout may be the same terminal.
      const written = await writePages(pages, format, io, () => spinner?.stop());
      if (written !== undefined) notices(written);
      return 0;
    }
    const records = await client.query(filters, queryOptions);
    spinner?.stop();
    // After the spinner is gone, so the lines are not erased with it.
    if (!options.quiet) io.stderr.write(foundLine(records.length));
    notices(records.length);
    // A table for a terminal fits its width; into a pipe or a file it is drawn in full.
    io.stdout.write(formatTable(records, { width: io.stdout.isTTY ? io.stdout.columns : undefined }));
    return 0;
  } finally {
    spinner?.stop();
    await client.close();
  }
}

/**
 * Writes each page as it comes, in the text `formatJson` or `formatCsv` gives the whole answer, waiting while
 * stdout's buffer is full so that pages never pile up in memory: the records written, or undefined when the
 * reader left early (`| head`), after which no more pages are asked for. A failure after some pages leaves
 * stdout cut short (a JSON array without its end; a CSV of the rows so far) and says so on stderr before the
 * error goes up to be printed, its exit status non-zero.
 */
async function writePages(
  pages: AsyncIterable<ReceivedRecord[]>,
  format: 'json' | 'csv',
  io: CommandIO,
  beforeFirstWrite: () => void,
): Promise<number | undefined> {
  const text = format === 'json' ? new JsonPages() : new CsvPages();
  const out = new ResultsOut(io);
  try {
    for await (const page of pages) {
      if (text.count === 0) beforeFirstWrite();
      if (!(await out.write(text.page(page)))) return undefined;
    }
    beforeFirstWrite();
    if (!(await out.write([text.end()]))) return undefined;
  } catch (error) {
    if (text.count > 0) io.stderr.write(cutShortWarning(format, text.count));
    throw error;
  } finally {
    out.release();
  }
  if (text.leftOut.size > 0) io.stderr.write(leftOutWarning(text.leftOut));
  return text.count;
}

/** The text of records that come page by page: each page's, then the end's; the records handed out so far. */
interface PagedText {
  count: number;
  /** Fields a later page's records carry that the output has no place for (CSV's header is written first). */
  readonly leftOut: ReadonlySet<string>;
  /** The text of a page, in pieces made as they are written (`RESULTS_PER_PIECE` records each). */
  page(records: readonly ReceivedRecord[]): Iterable<string>;
  end(): string;
}

/** `formatJson`'s array, byte for byte, a piece at a time (see `JsonArrayPieces`); JSON leaves no field out. */
class JsonPages extends JsonArrayPieces<ReceivedRecord> implements PagedText {
  readonly leftOut: ReadonlySet<string> = new Set();
}

/**
 * `formatCsv`'s text a piece at a time: the header is written with the first page, so its columns are that page's
 * (`csvColumns`); a service sends the same fields in every record of a table, and then this is `formatCsv`'s
 * text byte for byte. A field first seen on a later page has no column: it is left out, and named in a warning.
 */
class CsvPages implements PagedText {
  count = 0;
  readonly leftOut = new Set<string>();
  #columns: string[] | undefined;
  #named = new Set<string>();

  *page(records: readonly ReceivedRecord[]): Iterable<string> {
    if (this.#columns === undefined) {
      this.#columns = csvColumns(records);
      this.#named = new Set(this.#columns);
      yield `${this.#columns.join(',')}\n`;
    }
    const columns = this.#columns;
    for (let at = 0; at < records.length; at += RESULTS_PER_PIECE) {
      const rows = records.slice(at, at + RESULTS_PER_PIECE).map((record) => {
        const fields = record as Readonly<Record<string, unknown>>;
        for (const field in fields) if (!this.#named.has(field)) this.leftOut.add(field);
        return columns.map((field) => csvField(fields[field])).join(',');
      });
      this.count += rows.length;
      yield `${rows.join('\n')}\n`;
    }
  }

  end(): string {
    return this.#columns === undefined ? `${csvColumns([]).join(',')}\n` : '';
  }
}

/** The line on stderr when the query fails after some records were written: the output is not the whole answer. */
function cutShortWarning(format: 'json' | 'csv', count: number): string {
  const what = format === 'json' ? 'a JSON array without its closing bracket' : 'the rows so far';
  return `Warning: the output stops after ${count} records (${what}): the query failed before its end.\n`;
}

/** The line on stderr when records of a later page carried fields the CSV header, written with the first, lacks. */
function leftOutWarning(fields: ReadonlySet<string>): string {
  return (
    `Warning: records after the first page carry fields the CSV header does not name (${[...fields].join(', ')}): ` +
    'they are left out; --output-format json writes every field.\n'
  );
}
