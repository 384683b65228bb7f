/**
 * Results written to stdout a piece at a time, each write waiting while stdout's buffer is full: a command that
 * prints 100,000 results holds some 60 KiB of their text at once, where the whole text in one string (39 MiB of
 * `verify --output-format json` over 100,000 files) went to the old generation, with Node's copy of it for the
 * write beside it.
 */
import type { CommandIO } from './io.js';

/**
 * Results made into text at a time: a piece of some 60 KiB, short-lived, where a page's text in one piece (3 MiB
 * for 10,000 query records) would go straight to the old generation and raise the peak until the next full
 * collection.
 */
export const RESULTS_PER_PIECE = 200;

/**
 * `${JSON.stringify(all, null, 2)}\n` of results that come a page at a time, byte for byte, a piece at a time:
 * each piece stringified as the whole array is, without its brackets, the pieces joined as its elements are (`,`
 * and a line break); `[` before the first, `]` after the last, and `[]` when there was none. `toJson`, when given,
 * gives the value written for each result.
 */
export class JsonArrayPieces<Result> {
  /** Results handed out so far. */
  count = 0;

  constructor(private readonly toJson?: (result: Result) => unknown) {}

  *page(results: readonly Result[]): Iterable<string> {
    const { toJson } = this;
    for (let at = 0; at < results.length; at += RESULTS_PER_PIECE) {
      const slice = results.slice(at, at + RESULTS_PER_PIECE);
      const piece = toJson ? slice.map(toJson) : slice;
      // `[\n  {…},\n  {…}\n]`: the elements are what lies between the opening `[\n` and the closing `\n]`.
      const elements = JSON.stringify(piece, null, 2).slice(2, -2);
      const opening = this.count === 0 ? '[\n' : ',\n';
      this.count += piece.length;
      yield opening + elements;
    }
  }

  end(): string {
    return this.count === 0 ? '[]\n' : '\n]\n';
  }
}

/** The JSON array of `results` (see `JsonArrayPieces`), a piece at a time, its end included. */
export function* jsonArrayPieces<Result>(
  results: readonly Result[],
  toJson: (result: Result) => unknown,
): Iterable<string> {
  const json = new JsonArrayPieces(toJson);
  yield* json.page(results);
  yield json.end();
}

/** The lines `line` gives each result, joined, a piece of `RESULTS_PER_PIECE` results at a time. */
export function* linePieces<Result>(
  results: readonly Result[],
  line: (result: Result) => string,
): Iterable<string> {
  for (let at = 0; at < results.length; at += RESULTS_PER_PIECE) {
    yield results
      .slice(at, at + RESULTS_PER_PIECE)
      .map(line)
      .join('');
  }
}

/**
 * stdout as results are written to it: each write waits while its buffer is full, and tells whether stdout still
 * takes writes. It no longer does once a write failed: the reader closed the pipe (`| head`; `main` ignores that
 * EPIPE, and the rest of the answer is not wanted) or the output broke (`main` prints that error). Node never
 * closes stdout, so the failure is noted here, from its `error` events, until `release`. Once the run is
 * cancelled, writes no longer wait: what is written then (the results so far) goes out as Node can send it.
 */
export class ResultsOut {
  #failed = false;
  readonly #onError = () => {
    this.#failed = true;
  };

  constructor(readonly io: CommandIO) {
    io.stdout.on('error', this.#onError);
  }

  /** Writes `pieces` one after the other, each once the one before is taken; false when stdout takes no more. */
  async write(pieces: Iterable<string>): Promise<boolean> {
    for (const piece of pieces) {
      if (this.#failed) return false;
      if (!this.io.stdout.write(piece)) await this.#drained();
    }
    return !this.#failed;
  }

  /** Settles when stdout's buffer has drained, or stdout failed or closed, or the run is (or was) cancelled. */
  #drained(): Promise<void> {
    const { stdout, signal } = this.io;
    if (this.#failed || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        stdout.off('drain', done).off('close', done).off('error', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      stdout.on('drain', done).on('close', done).on('error', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops listening to stdout's errors. */
  release(): void {
    this.io.stdout.off('error', this.#onError);
  }
}

/** Writes `pieces` to stdout (see `ResultsOut`); false when stdout stopped taking them (`| head`). */
export async function writeResults(io: CommandIO, pieces: Iterable<string>): Promise<boolean> {
  const out = new ResultsOut(io);
  try {
    return await out.write(pieces);
  } finally {
    out.release();
  }
}
