/** `mission-data coverage`: the days the archive holds for each product, as a calendar, JSON, CSV or a web page. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { coverageFormats } from '../../api.js';
import { ExitCode, LocalFileError } from '../../core/errors.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { requiredFilters } from '../options.js';
import { rootMissingNotice } from '../root-notice.js';

/** How `coverage` prints: a calendar for people, or one record per product and day. */
export type CoverageFormat = 'calendar' | 'json' | 'csv';

/** The options commander hands to `coverage`. */
export interface CoverageCommandOptions extends GlobalOptions, QueryFilters {
  outputFormat?: CoverageFormat | undefined;
  /** Also write a self-contained HTML page with an SVG calendar per product to this file. */
  html?: string | undefined;
  pageSize?: number | undefined;
}

/** Runs `coverage`: one query of the archive, one look at the data root, then the calendar on stdout. */
export async function coverage(options: CoverageCommandOptions, io: CommandIO): Promise<number> {
  const format = options.outputFormat ?? 'calendar';
  const filters = requiredFilters(
    options,
    'coverage --instrument mag --data-level l1a --start-date 20250101',
  );
  const client = clientFor(options, io);
  try {
    const report = await client.coverage(filters, { signal: io.signal, pageSize: options.pageSize });
    const { formatCalendar, formatCalendarHtml, formatCoverageCsv, formatCoverageJson } =
      await coverageFormats();
    if (report.rootMissing && !options.quiet)
      io.stderr.write(rootMissingNotice((await client.config()).dataDir));
    if (report.products.length === 0 && !options.quiet) io.stderr.write('No files match the filters.\n');
    if (options.html) {
      const target = resolve(options.html);
      try {
        const { url, dataDir } = await client.config();
        await writeFile(target, formatCalendarHtml(report, { archive: url, dataRoot: dataDir }));
      } catch (error) {
        throw new LocalFileError(`Cannot write ${target}: ${(error as Error).message}`, { cause: error });
      }
      if (!options.quiet) io.stderr.write(`Wrote ${target}\n`);
    }
    const text =
      format === 'json'
        ? formatCoverageJson(report)
        : format === 'csv'
          ? formatCoverageCsv(report)
          : formatCalendar(report, { width: io.stdout.isTTY ? io.stdout.columns : undefined });
    io.stdout.write(text);
    return ExitCode.Success;
  } finally {
    await client.close();
  }
}
