/** What `download -` reads from stdin: file paths one per line, or what `query` prints as JSON or CSV. */
import { abortedError } from '../../core/batch.js';
import { UsageError } from '../../core/errors.js';
import type { CommandIO } from '../io.js';
import { parseCsv } from '../output.js';

/**
 * Replaces `-` with the paths read from stdin: one per line, or what `query --output-format json|csv` prints. On a
 * terminal it first says it is reading, as `gh` does, so the command does not look hung.
 */
export async function expandStdin(paths: string[], io: CommandIO, quiet: boolean): Promise<string[]> {
  if (!paths.includes('-')) return paths;
  if (io.stdin.isTTY && !quiet) {
    io.stderr.write("Reading file paths from stdin (lines, or query's JSON or CSV); Ctrl-D ends.\n");
  }
  const text = await readAll(io.stdin, io.signal);
  const fromStdin = parsePathList(text);
  return paths.flatMap((path) => (path === '-' ? fromStdin : [path]));
}

/**
 * Reads a list of paths: JSON when the text starts with `[` or `{` (an array of paths or of query records with
 * `file_path`, or one such record); the CSV of `query` (its `file_path` column) when the first line is a header
 * naming it; otherwise one path per line with blank lines ignored. The table of `query` is refused: its columns
 * are meant for people.
 */
export function parsePathList(text: string): string[] {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) {
    const lines = trimmed
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
    const header = lines[0]?.split(',') ?? [];
    if (header.length > 1 && header.includes('file_path')) return csvPaths(trimmed);
    if (lines.length > 1 && /^-+( +-+)+$/.test(lines[1] ?? '')) {
      throw new UsageError(
        "stdin holds query's table, not file paths: pipe `query --output-format json` (or csv) into `download -`.",
      );
    }
    return lines;
  }
  let data: unknown;
  try {
    data = JSON.parse(trimmed);
  } catch (error) {
    throw new UsageError(
      `stdin starts with '${trimmed[0]}' but is not valid JSON: ${(error as Error).message}`,
      { hint: 'Give one path per line, or the JSON array that query --output-format json prints.' },
    );
  }
  if (!Array.isArray(data)) {
    const path = filePathOf(data);
    if (path === undefined) {
      throw new UsageError(
        'stdin holds a JSON object without a file_path: give a JSON array of paths or of query records.',
      );
    }
    return [path];
  }
  return data.map((item: unknown, index) => {
    if (typeof item === 'string') return item;
    const path = filePathOf(item);
    if (path !== undefined) return path;
    throw new UsageError(
      `stdin JSON item ${index + 1} is neither a path nor a record with a file_path (as query --output-format json prints).`,
    );
  });
}

/** The `file_path` column of CSV text whose first row is its header. */
function csvPaths(text: string): string[] {
  const [header = [], ...rows] = parseCsv(text);
  const column = header.indexOf('file_path');
  return rows.map((row, index) => {
    const path = row[column]?.trim();
    if (!path) throw new UsageError(`stdin CSV row ${index + 2} has no file_path.`);
    return path;
  });
}

function filePathOf(item: unknown): string | undefined {
  const path =
    item !== null && typeof item === 'object' ? (item as { file_path?: unknown }).file_path : undefined;
  return typeof path === 'string' ? path : undefined;
}

async function readAll(stream: NodeJS.ReadableStream, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(abortedError(signal));
    if (signal.aborted) fail();
    signal.addEventListener('abort', fail, { once: true });
  });
  aborted.catch(() => undefined);
  const read = (async () => {
    for await (const chunk of stream as AsyncIterable<Buffer | string>) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  })();
  return Promise.race([read, aborted]);
}
