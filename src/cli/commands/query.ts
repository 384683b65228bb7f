/** `mission-data query`: finds files by their metadata and prints them as a table, JSON or CSV. */

import { UsageError } from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { caseHint, refuseFiltersOfOtherTables, requiredFilters } from '../options.js';
import { formatRecords, foundLine, OUTPUT_FORMATS, type OutputFormat } from '../output.js';
import { newerFormsWarning, possiblyCutWarning } from '../query-warnings.js';

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
    const records = await client.query(filters, {
      signal: io.signal,
      pageSize: options.pageSize,
      onNewerForms: (count) => {
        newerForms = count;
      },
      onPossiblyCut: (returned) => {
        cutAt = returned;
      },
    });
    spinner?.stop();
    // After the spinner is gone, so the lines are not erased with it.
    if (format === 'table' && !options.quiet) io.stderr.write(foundLine(records.length));
    // Nothing matched a value in another case than the archive's: say so, whatever the format.
    const hint = records.length === 0 && !options.quiet ? caseHint(filters) : undefined;
    if (hint) io.stderr.write(`Hint: ${hint}\n`);
    if (newerForms > 0 && !options.quiet) io.stderr.write(newerFormsWarning(newerForms));
    // Shown even with --quiet: a result that may be incomplete is not noise.
    if (cutAt !== undefined) io.stderr.write(possiblyCutWarning(cutAt));
    // A table for a terminal fits its width; into a pipe or a file it is drawn in full.
    const width = io.stdout.isTTY ? io.stdout.columns : undefined;
    io.stdout.write(formatRecords(records, format, { width }));
    return 0;
  } finally {
    spinner?.stop();
    await client.close();
  }
}
