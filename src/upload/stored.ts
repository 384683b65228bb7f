/**
 * What an upload learns of a name the store holds already: whether its bytes are this file's, why a name is only
 * reserved, and what to do about either.
 */
import { abortedError } from '../core/batch.js';
import { md5FromEtag } from '../core/checksums/checksum.js';
import { ApiError } from '../core/errors.js';
import { discardBody } from '../http/body.js';
import { formatName, type MissionFile, parseName } from '../naming/names.js';
import { formatTodayVersion, parseVersion } from '../naming/versions.js';
import type { HttpClient } from '../service/client.js';
import type { MeasuredFile } from './plan.js';

/**
 * How the stored copy of `key` differs from the local file, or undefined when it holds the same bytes. A
 * one-byte ranged GET gives the stored size (Content-Range) and ETag, a plain MD5 of the bytes for a single-part
 * object; a re-run of an upload batch thus counts the files it stored before as done.
 */
export async function differenceFromStored(
  http: Pick<HttpClient, 'resolveDownload' | 'getObject'>,
  key: string,
  local: MeasuredFile,
  hash: () => Promise<Buffer>,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  let size: number;
  let etag: string | undefined;
  try {
    const url = await http.resolveDownload(key, signal);
    const probe = await http.getObject(url, { start: 0, end: 0, signal });
    discardBody(probe.body);
    const range = /\/(\d+)\s*$/.exec(firstHeader(probe.headers['content-range']) ?? '');
    size = range
      ? Number(range[1])
      : probe.status === 200
        ? Number(firstHeader(probe.headers['content-length']))
        : Number.NaN;
    etag = firstHeader(probe.headers.etag);
  } catch (error) {
    if (signal?.aborted) throw abortedError(signal);
    // A range of an empty object cannot be satisfied: a stored file of 0 bytes is the same as an empty one here.
    if (error instanceof ApiError && error.status === 416 && local.size === 0) return undefined;
    const reason = error instanceof Error ? error.message : String(error);
    return `already stored; its bytes could not be compared with this file's (${reason})`;
  }
  if (size !== local.size) {
    return `already stored with other bytes: the stored file has ${Number.isNaN(size) ? 'an unknown number of' : size} bytes, this one ${local.size}`;
  }
  const stored = md5FromEtag(etag);
  if (!stored) {
    return `already stored with the same size (${size} bytes); whether its bytes are the same is unknown: the store states no MD5 (ETag ${etag ?? 'missing'})`;
  }
  const mine = await hash();
  if (!mine.equals(stored)) {
    return `already stored with other bytes of the same size (${size}): the stored MD5 is ${stored.toString('hex')}, this file's ${mine.toString('hex')}`;
  }
  return undefined;
}

/** A stored file is never replaced: the way to send new bytes is the next version of the name. */
export function nextVersionHint(file: MissionFile): string {
  const next = nextVersionName(file);
  return next
    ? `The store never replaces a file: give the new product the next version, e.g. ${next}, and upload that.`
    : 'The store never replaces a file: give the new file a name of its own (a new version), and upload that.';
}

/**
 * The name of the version after `file`'s, in the name's own form: `v01-02` → `v01-03` (`v01-99` → `v02-00`),
 * `v001.0002` → `v001.0003`, `v001` → `v002`, a SPICE kernel's digits plus one at their width
 * (`naif0012.tls` → `naif0013.tls`). Undefined where no next version can be said: a kernel whose name carries
 * no version, or whose "version" is a date (the Earth attitude kernels), or a next name the rules refuse.
 */
export function nextVersionName(file: MissionFile): string | undefined {
  const version = parseVersion(file.version);
  if (!version) return undefined;
  let next: string;
  if (file.kind === 'spice') {
    if (version.form !== 'digits' || file.version === '' || file.kernelType === 'earth_attitude')
      return undefined;
    const digits = String(version.minor + 1).padStart(file.version.length, '0');
    const name = file.name.replace(new RegExp(`${file.version}(?=[^0-9]*$)`), digits);
    return readsAs(name, file) ? name : undefined;
  }
  if (version.form === 'spec') {
    next =
      version.minor < 99
        ? `v${pad(version.major)}-${pad(version.minor + 1)}`
        : `v${pad(version.major + 1)}-00`;
  } else if (version.form === 'major-minor') {
    next =
      version.minor < 9999
        ? formatTodayVersion(version.major, version.minor + 1)
        : formatTodayVersion(version.major + 1, 0);
  } else if (version.form === 'minor-only' && version.minor < 999) {
    next = formatTodayVersion(undefined, version.minor + 1);
  } else return undefined;
  const name = formatName({ ...file, version: next });
  return readsAs(name, file) ? name : undefined;
}

/** True when `name` is read as a file of `file`'s kind and generation. */
function readsAs(name: string, file: MissionFile): boolean {
  try {
    const read = parseName(name);
    return read.kind === file.kind && read.generation === file.generation;
  } catch {
    return false;
  }
}

const pad = (value: number) => String(value).padStart(2, '0');

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when a 409 says the name is reserved by an unfinished upload rather than stored: the service client read
 * it from what the answer states (`takenNameCode`: the error name, else `Retry-After`).
 */
export function isNameReserved(error: ApiError): boolean {
  return error.code === 'E_NAME_RESERVED';
}

/** What a reserved name's 409 said, without the request in front. */
export function reservedMessage(error: ApiError): string {
  const at = error.message.indexOf(' reserved: ');
  if (at >= 0) return `not stored: the name is${error.message.slice(at)}`;
  // Another service's words: said whole, after what the answer stated.
  const said = error.message.replace(/^\S+ \S+: \d{3} /, '');
  return `not stored: the name is reserved by an upload that has not finished (the service said: ${said})`;
}

/** An unfinished upload holds the name: no file is stored, and the name frees itself. */
export function tryLaterHint(error: ApiError, now = Date.now()): string {
  const free = freeAgainAt(error, now);
  const when = free ? ` after ${free}` : ' later';
  return `No file of this name is stored: an upload of it started and has not finished (or was lost). Try again${when}; until then only the same bytes, sent with their MD5 (the default), take that upload over.`;
}

/** When a reserved name is free again (ISO 8601, whole seconds), from the answer's `Retry-After`. */
function freeAgainAt(error: ApiError, now: number): string | undefined {
  if (error.retryAfterMs !== undefined) {
    return new Date(Math.ceil((now + error.retryAfterMs) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }
  // Last resort, for a service that states no Retry-After: the time the reference server's words give.
  return /free again at (\S+?) if/.exec(error.message)?.[1];
}

/** True when `error` is the service's answer that the name is taken: stored, or reserved by an upload. */
export function isAlreadyStored(error: unknown): error is ApiError {
  return error instanceof ApiError && (error.code === 'E_ALREADY_EXISTS' || error.status === 409);
}
