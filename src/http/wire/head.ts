/**
 * The text of an HTTP/1.1 exchange: the request head written and the response head read (a chunked body's
 * framing is `chunked.ts`'s). Pure functions over bytes; the reader (`answer-reader.ts`) decides when to call them.
 */

/** A response head this client will not read: the message says why, the code is Node's parser's (llhttp). */
export class WireError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'WireError';
  }
}

/** A response head larger than this is refused (Node's own server takes 16 KiB; S3's heads are ~1 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

/** The head of an answer, as read off the wire. */
export interface ResponseHead {
  statusCode: number;
  /** Lower-case names; a repeated header's values in order. */
  headers: Record<string, string | string[]>;
  /** How the body is framed: its length, chunked, or until the server closes the connection. */
  framing: { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'close' };
  /** Whether the connection may carry another request after this answer. */
  keepAlive: boolean;
  /** The server's `Keep-Alive: timeout=N`, in ms, when it stated one. */
  keepAliveMs: number | undefined;
}

/** Characters a header value may not hold (CR, LF, NUL): a value with one would split the request. */
const UNSAFE_VALUE = /[\r\n\0]/;
/** A header name: an HTTP token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The request head, ready to write (latin1): request line, Host, the caller's headers, and for a request with a
 * body of `bodySize` bytes its Content-Length, stated here from that size (a caller's own is left out: the
 * length sent is the length declared), blank line.
 */
export function requestHead(
  method: string,
  url: URL,
  headers: Record<string, string>,
  bodySize?: number,
): string {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name))
      throw new WireError(`invalid header name ${JSON.stringify(name)}`, 'ERR_INVALID_HTTP_TOKEN');
    if (UNSAFE_VALUE.test(value))
      throw new WireError(`invalid value of the header ${name}`, 'ERR_INVALID_CHAR');
    if (bodySize !== undefined && name.length === 14 && name.toLowerCase() === 'content-length') continue;
    head += `${name}: ${value}\r\n`;
  }
  if (bodySize !== undefined) head += `content-length: ${bodySize}\r\n`;
  return `${head}\r\n`;
}

/**
 * The end of a response head in `bytes` (the index just past its blank line), searching from `from`; -1 while the
 * head is incomplete.
 */
export function headEnd(bytes: Buffer, length: number, from: number): number {
  const at = bytes.subarray(0, length).indexOf('\r\n\r\n', Math.max(0, from - 3), 'latin1');
  return at === -1 ? -1 : at + 4;
}

/** Characters of an HTTP token (a header's name), by character code. */
const TOKEN_CHARS = (() => {
  const table = new Uint8Array(128);
  for (const char of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
    table[char.charCodeAt(0)] = 1;
  }
  return table;
})();

/**
 * Header names in lower case by their spelling on the wire. A server repeats a few dozen names in every answer:
 * each is lowered once, and its lowered form, a property key already, serves every later answer. Bounded in
 * names and in their length, so that a server inventing names cannot grow it.
 */
const LOWERED = new Map<string, string>();
const MAX_LOWERED = 256;
const MAX_LOWERED_LENGTH = 64;

/**
 * Names nearly every answer of a service or an object store carries, lower case. Each is matched in place in its
 * usual spellings (lower case, capitalised words, and the odd ones of `COMMON_SPELLINGS`) without cutting the name
 * out of the head: the cut and its lookup were the larger part of reading a head. Any other name (and any other
 * spelling) goes through `loweredName`.
 */
const COMMON_NAMES = [
  'accept-ranges',
  'cache-control',
  'connection',
  'content-encoding',
  'content-length',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'keep-alive',
  'last-modified',
  'location',
  'repr-digest',
  'retry-after',
  'server',
  'transfer-encoding',
  'vary',
  'x-amz-checksum-crc32',
  'x-amz-checksum-crc32c',
  'x-amz-checksum-crc64nvme',
  'x-amz-checksum-sha1',
  'x-amz-checksum-sha256',
  'x-amz-checksum-type',
  'x-amz-id-2',
  'x-amz-request-id',
  'x-amz-server-side-encryption',
  'x-amz-version-id',
  'x-request-id',
];
const COMMON_SPELLINGS: Record<string, string> = { etag: 'ETag', 'content-md5': 'Content-MD5' };

/** Spellings of the common names, by length: spelling and lowered name in turn. */
const COMMON_BY_LENGTH = (() => {
  const table: string[][] = [];
  for (const lowered of COMMON_NAMES) {
    const words = lowered.split('-').map((word) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`);
    const spellings = new Set([lowered, words.join('-'), COMMON_SPELLINGS[lowered] ?? lowered]);
    table[lowered.length] ??= [];
    for (const spelling of spellings) table[lowered.length]?.push(spelling, lowered);
  }
  return table;
})();

/** The lowered common name spelled at `text[from, from + length)`, or undefined. */
function commonName(text: string, from: number, length: number): string | undefined {
  const spellings = COMMON_BY_LENGTH[length];
  if (spellings === undefined) return undefined;
  for (let at = 0; at < spellings.length; at += 2) {
    if (text.startsWith(spellings[at] as string, from)) return spellings[at + 1];
  }
  return undefined;
}

/** The header name `text[from, to)` in lower case. */
function loweredName(text: string, from: number, to: number): string {
  const name = text.slice(from, to);
  let lowered = LOWERED.get(name);
  if (lowered === undefined) {
    lowered = name.toLowerCase();
    if (LOWERED.size < MAX_LOWERED && name.length <= MAX_LOWERED_LENGTH) LOWERED.set(name, lowered);
  }
  return lowered;
}

/**
 * The index of the colon ending the header name that starts a line at `from`, or -1 when the line (which ends at
 * `end`) has no colon, a name that is empty, or a character no HTTP token has before its colon.
 */
function nameEnd(text: string, from: number, end: number): number {
  for (let at = from; at < end; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 58) return at === from ? -1 : at;
    if (code > 127 || TOKEN_CHARS[code] === 0) return -1;
  }
  return -1;
}

/** Whether a character is one `String.prototype.trim` removes (of those a latin1 text can hold). */
function isTrimmed(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 160;
}

/** `text[from, to)` without the white space around it, as `trim` leaves it, cut once. */
function trimmedSlice(text: string, from: number, to: number): string {
  let start = from;
  let end = to;
  while (start < end && isTrimmed(text.charCodeAt(start))) start += 1;
  while (end > start && isTrimmed(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

/** The status code of an `HTTP/1.x NNN reason` line, or -1. */
function statusOf(line: string): number {
  if (!line.startsWith('HTTP/1.') || (line[7] !== '0' && line[7] !== '1') || line[8] !== ' ') return -1;
  if (line.length > 12 && line[12] !== ' ') return -1;
  let code = 0;
  for (let at = 9; at < 12; at += 1) {
    const digit = line.charCodeAt(at) - 48;
    if (!(digit >= 0 && digit <= 9)) return -1;
    code = code * 10 + digit;
  }
  return /[\r\n]/.test(line) ? -1 : code;
}

/** The server's `Keep-Alive: timeout=N`. */
const KEEP_ALIVE_TIMEOUT = /\btimeout=(\d+)/i;

/** Reads a response head (without its final blank line's CRLF pair). Throws `WireError` on anything malformed. */
export function parseHead(text: string, method: string): ResponseHead {
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd === -1) lineEnd = text.length;
  const first = text.slice(0, lineEnd);
  const statusCode = statusOf(first);
  if (statusCode === -1) {
    throw new WireError(
      `the answer does not start with an HTTP/1.x status line (${JSON.stringify(first.slice(0, 80))})`,
      'HPE_INVALID_CONSTANT',
    );
  }
  const minor = first[7] === '1' ? 1 : 0;
  const headers: Record<string, string | string[]> = {};
  for (let at = lineEnd + 2; at < text.length; ) {
    let end = text.indexOf('\r\n', at);
    if (end === -1) end = text.length;
    let colon = text.indexOf(':', at);
    // A common name is a token already; any other is checked character by character.
    let name = colon > at && colon < end ? commonName(text, at, colon - at) : undefined;
    if (name === undefined) colon = nameEnd(text, at, end);
    if (colon === -1) {
      throw new WireError(
        `unreadable header line ${JSON.stringify(text.slice(at, Math.min(end, at + 80)))}`,
        'HPE_INVALID_HEADER_TOKEN',
      );
    }
    name ??= loweredName(text, at, colon);
    const value = trimmedSlice(text, colon + 1, end);
    const before = headers[name];
    if (before === undefined) headers[name] = value;
    else if (Array.isArray(before)) before.push(value);
    else headers[name] = [before, value];
    at = end + 2;
  }
  // The pattern finds the same timeout in the raw value as in its list's parts joined: its match needs no case,
  // and begins at a word's start, which a comma or white space before it gives alike.
  const keepAliveValue = headers['keep-alive'];
  const hint =
    keepAliveValue === undefined
      ? null
      : KEEP_ALIVE_TIMEOUT.exec(
          typeof keepAliveValue === 'string' ? keepAliveValue : keepAliveValue.join(','),
        );
  return {
    statusCode,
    headers,
    framing: framingOf(headers, statusCode, method),
    keepAlive: keepsAlive(headers.connection, minor),
    keepAliveMs: hint ? Number(hint[1]) * 1000 : undefined,
  };
}

/** Whether the connection serves another request: HTTP/1.1 unless it says `close`, HTTP/1.0 only if it says so. */
function keepsAlive(connection: string | string[] | undefined, minor: number): boolean {
  if (connection === undefined) return minor === 1;
  if (connection === 'keep-alive') return true;
  const said = listOf(connection);
  return minor === 1 ? !said.includes('close') : said.includes('keep-alive');
}

/** The values of a comma-separated header, lower case. */
function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
}

/** How the body of an answer is framed (RFC 9112 §6.3). */
function framingOf(
  headers: Record<string, string | string[]>,
  statusCode: number,
  method: string,
): ResponseHead['framing'] {
  if (method === 'HEAD' || statusCode === 204 || statusCode === 304 || statusCode < 200) {
    return { kind: 'length', length: 0 };
  }
  const coding = headers['transfer-encoding'] === undefined ? [] : listOf(headers['transfer-encoding']);
  if (coding.length > 0) {
    if (coding[coding.length - 1] !== 'chunked' || coding.length > 1) {
      throw new WireError(
        `unsupported Transfer-Encoding ${coding.join(', ')}`,
        'HPE_INVALID_TRANSFER_ENCODING',
      );
    }
    if (headers['content-length'] !== undefined) {
      // Both framings at once is how responses are smuggled: refused, as Node's own parser does.
      throw new WireError(
        'the answer has both Content-Length and Transfer-Encoding',
        'HPE_UNEXPECTED_CONTENT_LENGTH',
      );
    }
    return { kind: 'chunked' };
  }
  const declared = headers['content-length'];
  if (declared === undefined) return { kind: 'close' };
  if (typeof declared === 'string' && /^\d{1,15}$/.test(declared))
    return { kind: 'length', length: Number(declared) };
  const values = new Set(
    (Array.isArray(declared) ? declared : [declared]).flatMap((v) => v.split(',')).map((v) => v.trim()),
  );
  const [only] = values;
  if (values.size !== 1 || only === undefined || !/^\d{1,15}$/.test(only)) {
    throw new WireError(
      `unreadable Content-Length ${JSON.stringify(declared)}`,
      'HPE_INVALID_CONTENT_LENGTH',
    );
  }
  return { kind: 'length', length: Number(only) };
}
