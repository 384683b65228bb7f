/**
 * A large JSON array read a few elements at a time. V8 builds every value `JSON.parse` makes of a text of 100 KiB
 * or more in the old generation, where only a full collection frees it, and a string that large is itself
 * allocated there: a page of 10,000 query records parsed at once leaves megabytes there that a caller taking
 * each record in turn never needed together. The array's bytes (UTF-8, as they came) are scanned once for where
 * its elements end (strings, nesting and escapes followed, nothing else read: every byte JSON's structure uses
 * is ASCII, and no byte of a multi-byte UTF-8 character is), and its elements are decoded and parsed in runs of
 * a few tens of KiB as they are taken, each run short-lived.
 */

/** Texts this long are what V8 parses straight into the old generation (its pretenuring threshold). */
export const LAZY_FROM_BYTES = 100 * 1024;
/** Bytes of elements parsed at once: well below the threshold, so a run's text and values die young. */
const RUN_BYTES = 32 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** True for JSON's white space. */
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The first index at or after `from` that is not white space. */
function skipSpace(bytes: Buffer, from: number): number {
  let at = from;
  while (at < bytes.length && isSpace(bytes[at] as number)) at += 1;
  return at;
}

/** The index of the quote closing the string whose opening quote is at `open`; -1 when it never closes. */
function stringEnd(bytes: Buffer, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, from);
    if (quote < 0) return -1;
    let slashes = 0;
    while (bytes[quote - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Where a value starting at `from` ends (the index after it), with `commas` given the indices of the commas that
 * separate the elements of the array it is, when it is one; -1 when its brackets, braces or strings do not close.
 * Only the structure is followed: what lies between is JSON's to judge when it is parsed.
 */
function valueEnd(bytes: Buffer, from: number, commas?: number[]): number {
  const first = bytes[from];
  if (first === QUOTE) {
    const end = stringEnd(bytes, from);
    return end < 0 ? -1 : end + 1;
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number or a literal: it ends where the enclosing structure goes on.
    let at = from;
    while (at < bytes.length) {
      const code = bytes[at] as number;
      if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isSpace(code)) break;
      at += 1;
    }
    return at;
  }
  let depth = 0;
  for (let at = from; at < bytes.length; at += 1) {
    const code = bytes[at];
    if (code === QUOTE) {
      at = stringEnd(bytes, at);
      if (at < 0) return -1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return at + 1;
    } else if (code === COMMA && depth === 1 && commas) commas.push(at);
  }
  return -1;
}

/** A JSON array held as its bytes: its length known, its elements parsed as they are taken. */
export class JsonArrayText {
  /** How many elements the array has. */
  readonly length: number;

  /**
   * @param bytes the UTF-8 text the array is in
   * @param open the index of its `[`
   * @param commas the indices of the commas between its elements
   * @param close the index of its `]`
   */
  constructor(
    readonly bytes: Buffer,
    readonly open: number,
    readonly commas: readonly number[],
    readonly close: number,
  ) {
    const empty = commas.length === 0 && skipSpace(bytes, open + 1) === close;
    this.length = empty ? 0 : commas.length + 1;
  }

  /** The text of the array from its start, at most `bytes` of it (for a message). */
  head(bytes: number): string {
    return this.bytes.toString('utf8', this.open, Math.min(this.close + 1, this.open + bytes));
  }

  /** The element at `index`, parsed alone (a `SyntaxError` when its text is not JSON). */
  at(index: number): unknown {
    return JSON.parse(this.bytes.toString('utf8', this.#start(index), this.#end(index)));
  }

  /**
   * The elements in runs of about `RUN_BYTES` bytes of text, each run parsed when it is taken; a run that is not
   * JSON throws a `SyntaxError` there, with the elements before it already handed over.
   */
  *runs(): Generator<unknown[], void, undefined> {
    let first = 0;
    while (first < this.length) {
      const start = this.#start(first);
      let last = first;
      while (last + 1 < this.length && this.#end(last + 1) - start <= RUN_BYTES) last += 1;
      const run = JSON.parse(`[${this.bytes.toString('utf8', start, this.#end(last))}]`) as unknown[];
      if (run.length !== last - first + 1) throw new SyntaxError('an element is not a single JSON value');
      yield run;
      first = last + 1;
    }
  }

  /**
   * Every element, parsed at once, for a caller that keeps them all: V8 then builds them straight in the old
   * generation, where they end, rather than copying each out of the young one. A `SyntaxError` when the array's
   * text is not JSON.
   */
  parseWhole(): unknown[] {
    return JSON.parse(this.bytes.toString('utf8', this.open, this.close + 1)) as unknown[];
  }

  /** Every element, parsed, for `JSON.stringify`; the array's first KiB of text when it is not JSON. */
  toJSON(): unknown {
    try {
      return this.parseWhole();
    } catch {
      return this.head(1024);
    }
  }

  #start(index: number): number {
    return index === 0 ? this.open + 1 : (this.commas[index - 1] as number) + 1;
  }

  #end(index: number): number {
    return index === this.length - 1 ? this.close : (this.commas[index] as number);
  }
}

/** The array whose `[` is at `open`, scanned; undefined when its structure does not close. */
function scanArray(bytes: Buffer, open: number): JsonArrayText | undefined {
  const commas: number[] = [];
  const end = valueEnd(bytes, open, commas);
  return end < 0 ? undefined : new JsonArrayText(bytes, open, commas, end - 1);
}

/** UTF-8 bytes of a text. */
function bytesOf(text: string | Buffer): Buffer {
  return typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
}

/** A text (UTF-8 bytes) that is one JSON array, white space around it allowed, scanned; undefined for anything else. */
export function lazyArray(text: string | Buffer): JsonArrayText | undefined {
  const bytes = bytesOf(text);
  const open = skipSpace(bytes, 0);
  if (bytes[open] !== OPEN_BRACKET) return undefined;
  const array = scanArray(bytes, open);
  return array && skipSpace(bytes, array.close + 1) === bytes.length ? array : undefined;
}

/**
 * A text that is one JSON object with a member `key` whose value is an array: the object parsed with that member
 * `null`, and the array scanned. Undefined for any other text (the caller parses it whole). Of members named
 * alike, the last counts, as `JSON.parse` takes it.
 */
export function objectWithLazyArray(
  text: string | Buffer,
  key: string,
): { object: unknown; array: JsonArrayText } | undefined {
  const bytes = bytesOf(text);
  const wanted = JSON.stringify(key);
  let at = skipSpace(bytes, 0);
  if (bytes[at] !== OPEN_BRACE) return undefined;
  let found: JsonArrayText | undefined;
  at = skipSpace(bytes, at + 1);
  if (bytes[at] === CLOSE_BRACE) return undefined;
  for (;;) {
    if (bytes[at] !== QUOTE) return undefined;
    const keyEnd = stringEnd(bytes, at);
    if (keyEnd < 0) return undefined;
    const name = keyEnd + 1 - at === wanted.length ? bytes.toString('utf8', at, keyEnd + 1) : '';
    at = skipSpace(bytes, keyEnd + 1);
    if (bytes[at] !== COLON) return undefined;
    at = skipSpace(bytes, at + 1);
    if (name === wanted && bytes[at] === OPEN_BRACKET) {
      found = scanArray(bytes, at);
      if (!found) return undefined;
      at = found.close + 1;
    } else {
      if (name === wanted) found = undefined;
      at = valueEnd(bytes, at);
      if (at < 0) return undefined;
    }
    at = skipSpace(bytes, at);
    const code = bytes[at];
    if (code === CLOSE_BRACE) break;
    if (code !== COMMA) return undefined;
    at = skipSpace(bytes, at + 1);
  }
  if (!found || skipSpace(bytes, at + 1) !== bytes.length) return undefined;
  try {
    const rest = `${bytes.toString('utf8', 0, found.open)}null${bytes.toString('utf8', found.close + 1)}`;
    return { object: JSON.parse(rest), array: found };
  } catch {
    return undefined;
  }
}
