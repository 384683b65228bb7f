/**
 * A large JSON array read a few elements at a time. V8 builds every value `JSON.parse` makes of a text of 100 KiB
 * or more in the old generation, where only a full collection frees it: a page of 10,000 query records parsed at
 * once leaves megabytes there that a caller taking each record in turn never needed together. The array's text
 * is scanned once for where its elements end (strings, nesting and escapes followed, nothing else read), and
 * its elements are parsed in runs of a few tens of KiB as they are taken, each run short-lived.
 */

/** Texts this long are what V8 parses straight into the old generation (its pretenuring threshold). */
export const LAZY_FROM_CHARS = 100 * 1024;
/** Characters of elements parsed at once: well below the threshold, so a run's values die young. */
const RUN_CHARS = 32 * 1024;

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
function skipSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length && isSpace(text.charCodeAt(at))) at += 1;
  return at;
}

/** The index of the quote closing the string whose opening quote is at `open`; -1 when it never closes. */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Where a value starting at `from` ends (the index after it), with `commas` given the indices of the commas that
 * separate the elements of the array it is, when it is one; -1 when its brackets, braces or strings do not close.
 * Only the structure is followed: what lies between is JSON's to judge when it is parsed.
 */
function valueEnd(text: string, from: number, commas?: number[]): number {
  const first = text.charCodeAt(from);
  if (first === QUOTE) {
    const end = stringEnd(text, from);
    return end < 0 ? -1 : end + 1;
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number or a literal: it ends where the enclosing structure goes on.
    let at = from;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isSpace(code)) break;
      at += 1;
    }
    return at;
  }
  let depth = 0;
  for (let at = from; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) return -1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return at + 1;
    } else if (code === COMMA && depth === 1 && commas) commas.push(at);
  }
  return -1;
}

/** A JSON array held as its text: its length known, its elements parsed as they are taken. */
export class JsonArrayText {
  /** How many elements the array has. */
  readonly length: number;

  /**
   * @param text the text the array is in
   * @param open the index of its `[`
   * @param commas the indices of the commas between its elements
   * @param close the index of its `]`
   */
  constructor(
    readonly text: string,
    readonly open: number,
    readonly commas: readonly number[],
    readonly close: number,
  ) {
    const empty = commas.length === 0 && skipSpace(text, open + 1) === close;
    this.length = empty ? 0 : commas.length + 1;
  }

  /** The element at `index`, parsed alone (a `SyntaxError` when its text is not JSON). */
  at(index: number): unknown {
    return JSON.parse(this.text.slice(this.#start(index), this.#end(index)));
  }

  /**
   * The elements in runs of about `RUN_CHARS` characters of text, each run parsed when it is taken; a run that is
   * not JSON throws a `SyntaxError` there, with the elements before it already handed over.
   */
  *runs(): Generator<unknown[], void, undefined> {
    let first = 0;
    while (first < this.length) {
      const start = this.#start(first);
      let last = first;
      while (last + 1 < this.length && this.#end(last + 1) - start <= RUN_CHARS) last += 1;
      const run = JSON.parse(`[${this.text.slice(start, this.#end(last))}]`) as unknown[];
      if (run.length !== last - first + 1) throw new SyntaxError('an element is not a single JSON value');
      yield run;
      first = last + 1;
    }
  }

  /** Every element, parsed (for a caller that wants the whole array after all: an error message). */
  toJSON(): unknown[] {
    return [...this.runs()].flat();
  }

  #start(index: number): number {
    return index === 0 ? this.open + 1 : (this.commas[index - 1] as number) + 1;
  }

  #end(index: number): number {
    return index === this.length - 1 ? this.close : (this.commas[index] as number);
  }
}

/** The array whose `[` is at `open`, scanned; undefined when its structure does not close. */
function scanArray(text: string, open: number): JsonArrayText | undefined {
  const commas: number[] = [];
  const end = valueEnd(text, open, commas);
  return end < 0 ? undefined : new JsonArrayText(text, open, commas, end - 1);
}

/** A text that is one JSON array (white space around it allowed), scanned; undefined for anything else. */
export function lazyArray(text: string): JsonArrayText | undefined {
  const open = skipSpace(text, 0);
  if (text.charCodeAt(open) !== OPEN_BRACKET) return undefined;
  const array = scanArray(text, open);
  return array && skipSpace(text, array.close + 1) === text.length ? array : undefined;
}

/**
 * A text that is one JSON object with a member `key` whose value is an array: the object parsed with that member
 * `null`, and the array scanned. Undefined for any other text (the caller parses it whole). Of members named
 * alike, the last counts, as `JSON.parse` takes it.
 */
export function objectWithLazyArray(
  text: string,
  key: string,
): { object: unknown; array: JsonArrayText } | undefined {
  const wanted = JSON.stringify(key);
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) return undefined;
  let found: JsonArrayText | undefined;
  at = skipSpace(text, at + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return undefined;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0) return undefined;
    const name = text.slice(at, keyEnd + 1);
    at = skipSpace(text, keyEnd + 1);
    if (text.charCodeAt(at) !== COLON) return undefined;
    at = skipSpace(text, at + 1);
    if (name === wanted && text.charCodeAt(at) === OPEN_BRACKET) {
      found = scanArray(text, at);
      if (!found) return undefined;
      at = found.close + 1;
    } else {
      if (name === wanted) found = undefined;
      at = valueEnd(text, at);
      if (at < 0) return undefined;
    }
    at = skipSpace(text, at);
    const code = text.charCodeAt(at);
    if (code === CLOSE_BRACE) break;
    if (code !== COMMA) return undefined;
    at = skipSpace(text, at + 1);
  }
  if (!found || skipSpace(text, at + 1) !== text.length) return undefined;
  try {
    const rest = `${text.slice(0, found.open)}null${text.slice(found.close + 1)}`;
    return { object: JSON.parse(rest), array: found };
  } catch {
    return undefined;
  }
}
