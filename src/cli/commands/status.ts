/** `mission-data status`: how the local data root differs from the archive; exit 1 when it does. */

import { ExitCode } from '../../core/errors.js';
import type { StatusEntry, StatusReport } from '../../coverage/types.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import { type CommandIO, clientFor, type GlobalOptions } from '../io.js';
import { requiredFilters } from '../options.js';

/** How `status` prints: a line per file, or a JSON array of entries. */
export type StatusFormat = 'text' | 'json';

/** The options commander hands to `status`. */
export interface StatusCommandOptions extends GlobalOptions, QueryFilters {
  outputFormat?: StatusFormat | undefined;
  pageSize?: number | undefined;
}

/** One line of the text output: `missing <path>`, `outdated <path> (the archive has v01-01)`, ... */
export function statusLine(entry: StatusEntry): string {
  return `${entry.status} ${entry.path}${entry.reason ? ` (${entry.reason})` : ''}\n`;
}

/** The counts, for stderr. */
export function statusSummary(report: StatusReport): string {
  const { counts } = report;
  const files = `${report.archiveFiles} ${report.archiveFiles === 1 ? 'file' : 'files'} in the archive, ${report.localFiles} of them here`;
  const head = report.inStep
    ? `In step: ${files}.`
    : `${counts.missing} missing, ${counts.outdated} outdated, ${counts.extra} extra, ${counts.changed} changed (${files}).`;
  const unchecked =
    report.unrecorded > 0
      ? ` ${report.unrecorded} local ${report.unrecorded === 1 ? 'file was' : 'files were'} not downloaded by mission-data here, so ${report.unrecorded === 1 ? 'its' : 'their'} bytes were not compared.`
      : '';
  return `${head}${unchecked}\n`;
}

/** Runs `status`: a line per difference on stdout, counts on stderr; 0 when in step, 1 when not. */
export async function status(options: StatusCommandOptions, io: CommandIO): Promise<number> {
  const filters = requiredFilters(options, 'status --instrument mag --start-date 20250101');
  const client = clientFor(options, io);
  try {
    const report = await client.status(filters, { signal: io.signal, pageSize: options.pageSize });
    io.stdout.write(
      options.outputFormat === 'json'
        ? `${JSON.stringify(report.entries, null, 2)}\n`
        : report.entries.map(statusLine).join(''),
    );
    if (!options.quiet) io.stderr.write(statusSummary(report));
    return report.inStep ? ExitCode.Success : ExitCode.Failure;
  } finally {
    await client.close();
  }
}
