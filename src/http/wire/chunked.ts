/**
 * A chunked body's framing (RFC 9112 §7.1), taken apart as its bytes arrive, as strictly as Node's own parser
 * (llhttp) takes it: every line ends with CRLF (a bare LF is refused: a proxy that reads it otherwise would
 * split the stream elsewhere), and the trailers are bounded, in lines and in bytes.
 */
import { WireError } from './head.js';

/** A chunk size line (with its extensions) or a trailer line longer than this is refused. */
const MAX_LINE_BYTES = 4096;
/** Trailer lines taken at most (S3 sends none; a checksum trailer is one or two). */
export const MAX_TRAILER_LINES = 100;
/** Bytes of trailers taken at most. */
export const MAX_TRAILER_BYTES = 16 * 1024;

const CR = 13;
const LF = 10;
/** A chunk size, then its extensions. */
const SIZE_LINE = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/;
/** A trailer line: a field name (an HTTP token), a colon, a value. */
const TRAILER_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/;

/** What the next bytes of a chunked body are. */
type Expect = 'size' | 'data' | 'data-end' | 'trailer' | 'done';

/** The line each state reads, as messages name it. */
const LINE_NAMES: Record<Expect, string> = {
  size: 'the chunk size line',
  data: 'a chunk',
  'data-end': 'the line ending a chunk',
  trailer: 'a trailer line',
  done: 'the body',
};

/**
 * Takes a chunked body apart in any split: `feed` hands the data of each chunk (views of the bytes given, no
 * copy) to `onData` and says how many of the given bytes belong to the body, so bytes after its end are known.
 * Trailers are checked and dropped.
 */
export class ChunkedDecoder {
  #state: Expect = 'size';
  /** A line gathered across reads (only while one is split between them). */
  #line = '';
  #left = 0;
  #trailerLines = 0;
  #trailerBytes = 0;

  get done(): boolean {
    return this.#state === 'done';
  }

  /** Feeds bytes; returns how many of them were part of the body (all but what follows its end). */
  feed(bytes: Buffer, onData: (data: Buffer) => void): number {
    let at = 0;
    while (at < bytes.length && this.#state !== 'done') {
      if (this.#state === 'data') {
        const take = Math.min(this.#left, bytes.length - at);
        onData(bytes.subarray(at, at + take));
        at += take;
        this.#left -= take;
        if (this.#left === 0) this.#state = 'data-end';
        continue;
      }
      const newline = bytes.indexOf(LF, at);
      const end = newline === -1 ? bytes.length : newline + 1;
      this.#line += bytes.toString('latin1', at, end);
      at = end;
      if (this.#line.length > MAX_LINE_BYTES) {
        throw new WireError(
          `${LINE_NAMES[this.#state]} is longer than 4 KiB`,
          'HPE_CHUNK_EXTENSIONS_OVERFLOW',
        );
      }
      if (newline === -1) break;
      const line = this.#line;
      this.#line = '';
      if (line.length < 2 || line.charCodeAt(line.length - 2) !== CR) {
        throw new WireError(
          `a bare LF ends ${LINE_NAMES[this.#state]} (HTTP/1.1 lines end with CRLF)`,
          'HPE_CR_EXPECTED',
        );
      }
      this.#onLine(line.slice(0, -2));
    }
    return at;
  }

  /** One whole line (without its CRLF) of the framing. */
  #onLine(line: string): void {
    if (this.#state === 'data-end') {
      if (line !== '') throw new WireError('a chunk is longer than its size says', 'HPE_STRICT');
      this.#state = 'size';
    } else if (this.#state === 'size') {
      const size = SIZE_LINE.exec(line);
      if (!size) {
        throw new WireError(
          `unreadable chunk size ${JSON.stringify(line.slice(0, 40))}`,
          'HPE_INVALID_CHUNK_SIZE',
        );
      }
      this.#left = Number.parseInt(size[1] as string, 16);
      this.#state = this.#left === 0 ? 'trailer' : 'data';
    } else if (line === '') {
      this.#state = 'done';
    } else {
      this.#onTrailer(line);
    }
  }

  /** A trailer line: checked, counted, dropped. */
  #onTrailer(line: string): void {
    this.#trailerLines += 1;
    this.#trailerBytes += line.length + 2;
    if (this.#trailerLines > MAX_TRAILER_LINES || this.#trailerBytes > MAX_TRAILER_BYTES) {
      throw new WireError(
        `the trailers run past ${MAX_TRAILER_LINES} lines or ${MAX_TRAILER_BYTES / 1024} KiB`,
        'HPE_HEADER_OVERFLOW',
      );
    }
    if (!TRAILER_LINE.test(line) || line.includes('\r')) {
      throw new WireError(
        `unreadable trailer line ${JSON.stringify(line.slice(0, 80))}`,
        'HPE_INVALID_HEADER_TOKEN',
      );
    }
  }
}
