/**
 * The line a settled file gets, and which files get one: on a terminal each failure (every file with `verbose`,
 * and the statuses listed), anywhere else each file fetched or failed; unchanged files (a verified copy, already
 * stored) only with `verbose`; when quiet, only failures.
 */
import { AbortedError } from '../core/errors.js';
import { formatBytes } from './format.js';
import type { ReporterOptions, SettledFile, TransferWords } from './transfer-types.js';

/** Decides and writes the lines of settled files. */
export class FileLines {
  constructor(
    private readonly words: TransferWords,
    private readonly options: ReporterOptions,
    private readonly animate: boolean,
  ) {}

  /** Whether `file` gets a line: `failed` as the batch counts it, `repeated` for a cause already told. */
  shows(file: SettledFile, failed: boolean, repeated: boolean): boolean {
    // Quiet, an interruption says itself by the exit status alone: a file it cut short is no failure to report.
    const cutShort = this.options.quiet && file.error instanceof AbortedError;
    if (repeated || cutShort) return false;
    if (failed) return true;
    const unchanged = (this.options.unchanged ?? []).includes(file.status);
    if (unchanged) return Boolean(this.options.verbose) && !this.options.quiet;
    return this.animate
      ? Boolean(this.options.verbose || (this.options.listed ?? []).includes(file.status))
      : !this.options.quiet;
  }

  /** The text written for `file`: its line, and with `debug` a failure's stack. */
  text(file: SettledFile, failed: boolean): string {
    // On a terminal, a file cut short says so in a word, so its line stays within the terminal's width.
    const note = this.animate && file.error instanceof AbortedError ? 'interrupted' : file.note;
    // On a terminal the file's name stands for its storage path (the path follows from the name), so the kept
    // lines stay within 80 columns; pipes and logs get the whole path.
    const label = this.animate ? file.label.slice(file.label.lastIndexOf('/') + 1) : file.label;
    const line = `${this.line({ ...file, label, note })}\n`;
    return failed && this.options.debug && file.error?.stack ? `${line}${file.error.stack}\n` : line;
  }

  private line(file: SettledFile): string {
    const word = this.words.statuses[file.status] ?? file.status;
    if (this.options.failures.includes(file.status)) {
      const reason = withoutName(file.note ?? file.error?.message ?? 'failed', file.label);
      return reason === word ? `${word} ${file.label}` : `${word} ${file.label}: ${reason}`;
    }
    // A resumed file says so, and how much of it came in this run (`resumed: 854.0 MiB of 2.0 GiB fetched`).
    const size =
      file.size !== undefined && file.size > file.bytes
        ? ` (resumed: ${formatBytes(file.bytes)} of ${formatBytes(file.size)} fetched)`
        : file.bytes > 0
          ? ` (${formatBytes(file.bytes)})`
          : '';
    return `${word} ${file.label}${size}${file.note ? ` (${file.note})` : ''}`;
  }
}

/**
 * A failure's message without the file's name at its head, which the line already gives: `upload <key>: ` goes,
 * and a PUT to a URL naming the file keeps its method and host (`PUT http://host: 403 …`).
 */
function withoutName(reason: string, label: string): string {
  const name = label.split(/[\\/]/).pop() ?? label;
  if (name === '') return reason;
  const head = /^(upload|PUT) (\S+): /.exec(reason);
  if (!head?.[2]?.includes(name)) return reason;
  const rest = reason.slice(head[0].length);
  if (head[1] === 'upload') return rest;
  try {
    return `${head[1]} ${new URL(head[2]).origin}: ${rest}`;
  } catch {
    return `${head[1]}: ${rest}`;
  }
}
