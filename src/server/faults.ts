/**
 * Fault modes of the reference server: what Amazon S3 and real networks do that the folder store does not,
 * each one small and asked for explicitly (`startReferenceServer({ faults })`, some as `serve` options), so the
 * client's tests can meet them. Without faults nothing here changes an answer. They act at the object routes,
 * never inside a store, so every `ObjectStore` meets them alike.
 */
import type { ServerResponse } from 'node:http';
import { type ChecksumAlgorithm, RunningChecksum } from '../core/checksums/checksum.js';
import type { ObjectStore } from './objects/object-store.js';

/** An `x-amz-checksum-*` algorithm S3 may state. */
export type AmzChecksum = Exclude<ChecksumAlgorithm, 'md5'>;

/** The fault modes; every one is off unless given. */
export interface FaultOptions {
  /** Seconds the pre-signed URLs handed out stay valid (default: an hour for uploads, a day for downloads). */
  urlLifeSeconds?: number | undefined;
  /**
   * Objects answer as if stored with SSE-KMS: `x-amz-server-side-encryption: aws:kms` and an ETag that is not
   * their MD5 (and no Content-MD5 or CRC-32 header, as S3 sends none); and `/download` states no checksum of
   * them (in its URL's fragment), as the mission's service states none: the client has nothing to check such an
   * object against.
   */
  kms?: boolean | undefined;
  /**
   * Whole-object answers carry these `x-amz-checksum-*` headers, as S3 does for `x-amz-checksum-mode: ENABLED`,
   * and the download URLs sign that header, as a service may (this server's S3 store does not).
   */
  checksums?: readonly AmzChecksum[] | undefined;
  /** Object errors are S3 XML documents (`<Error><Code>…</Code><Message>…</Message></Error>`), not plain text. */
  xmlErrors?: boolean | undefined;
  /** The next `count` object requests are answered with `status` (500 InternalError or 503 SlowDown). */
  burst?: { status: 500 | 503; count: number } | undefined;
  /** Every object request is first answered 307 Temporary Redirect to an equivalent URL. */
  redirect?: boolean | undefined;
  /**
   * Once object GETs have sent `afterBytes` body bytes, every connection drops and the server refuses
   * connections for `forMs` (a lost network), then listens again on the same port. Once.
   */
  outage?: { afterBytes: number; forMs: number } | undefined;
}

/** The request header that asks S3 for an object's stored checksums on a GET. */
export const CHECKSUM_MODE_HEADER = 'x-amz-checksum-mode';

/** The query parameter a redirected object URL carries, so it is not redirected again. */
const REDIRECTED_PARAMETER = 'x-redirected';

/** S3's error codes for the statuses the object routes answer with. */
const S3_CODES: Record<number, string> = {
  400: 'InvalidRequest',
  403: 'AccessDenied',
  404: 'NoSuchKey',
  412: 'PreconditionFailed',
  416: 'InvalidRange',
  500: 'InternalError',
  503: 'SlowDown',
};

/** The faults of one running server, with what they have counted so far. */
export class Faults {
  readonly options: FaultOptions;
  #burstLeft: number;
  #sentBytes = 0;
  #outageDone = false;
  /** Drops every connection and stops listening for a while; set by the server once it listens. */
  interrupt: ((forMs: number) => void) | undefined;
  /** Checksums computed for `checksums`, by key, size and mtime. */
  readonly #sums = new Map<string, string>();

  constructor(options: FaultOptions = {}) {
    this.options = options;
    this.#burstLeft = options.burst?.count ?? 0;
  }

  /** Answers an object request itself when a burst or redirect says so; true when it did. */
  intercept(res: ServerResponse, rawQuery: string, path: string): boolean {
    if (this.#burstLeft > 0 && this.options.burst) {
      this.#burstLeft -= 1;
      const status = this.options.burst.status;
      this.sendError(
        res,
        status,
        status === 503
          ? 'Please reduce your request rate.'
          : 'We encountered an internal error. Please try again.',
      );
      return true;
    }
    if (this.options.redirect && !new URLSearchParams(rawQuery).has(REDIRECTED_PARAMETER)) {
      const location = `${path}?${rawQuery}${rawQuery ? '&' : ''}${REDIRECTED_PARAMETER}=1`;
      res.writeHead(307, { Location: location, 'Content-Length': '0' });
      res.end();
      return true;
    }
    return false;
  }

  /** An error answer: S3's XML document when asked for, plain text otherwise. */
  sendError(
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
    { expired = false }: { expired?: boolean } = {},
  ): void {
    const xml = this.options.xmlErrors === true;
    // S3 refuses an expired URL as AccessDenied, and any other bad signature as SignatureDoesNotMatch.
    const code = status === 403 && !expired ? 'SignatureDoesNotMatch' : S3_CODES[status];
    const text = xml
      ? `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code ?? 'Error'}</Code><Message>${escapeXml(
          expired ? 'Request has expired' : message,
        )}</Message></Error>`
      : `${message}\n`;
    const body = Buffer.from(text, 'utf8');
    res.writeHead(status, {
      'Content-Type': xml ? 'application/xml' : 'text/plain; charset=utf-8',
      'Content-Length': String(body.length),
      ...headers,
    });
    res.end(body);
  }

  /** The ETag an object answers with: its MD5's, or under `kms` another value of the same form. */
  etag(md5Etag: string): string {
    if (!this.options.kms) return md5Etag;
    // S3's SSE-KMS ETags look like MD5s (32 hex digits) but are not the MD5 of the data.
    const hex = md5Etag.replace(/"/g, '');
    return `"${[...hex].reverse().join('')}"`;
  }

  /** False when `/download` answers state no checksum of their object (under `kms`). */
  get statesDigests(): boolean {
    return this.options.kms !== true;
  }

  /** Headers every object answer gets (a part of the object too, as S3 says how it is stored on each). */
  objectHeaders(): Record<string, string> {
    return this.options.kms ? { 'x-amz-server-side-encryption': 'aws:kms' } : {};
  }

  /**
   * A download URL as a service that signs `x-amz-checksum-mode` hands it out when objects carry `checksums`:
   * naming the header among its signed headers, so a client must send the header to be stated the checksums.
   */
  downloadUrl(url: string): string {
    if ((this.options.checksums ?? []).length === 0) return url;
    const signed = new URL(url);
    signed.searchParams.set('X-Amz-SignedHeaders', `host;${CHECKSUM_MODE_HEADER}`);
    return signed.toString();
  }

  /**
   * Headers a whole-object answer gets besides the store's own, and whether those checksum headers stay. As on
   * S3, the `x-amz-checksum-*` headers come only when the request sends `x-amz-checksum-mode: ENABLED`.
   */
  async wholeObjectHeaders(
    store: ObjectStore,
    key: string,
    size: number,
    mtimeMs: number,
    checksumMode = true,
  ): Promise<{ headers: Record<string, string>; keepOwn: boolean }> {
    const headers: Record<string, string> = {};
    for (const algorithm of checksumMode ? (this.options.checksums ?? []) : []) {
      headers[`x-amz-checksum-${algorithm}`] = await this.#checksum(store, key, size, mtimeMs, algorithm);
    }
    return { headers, keepOwn: !this.options.kms && (this.options.checksums ?? []).length === 0 };
  }

  /** Notes body bytes sent by an object GET; starts the outage once they reach its threshold. */
  sent(bytes: number): void {
    this.#sentBytes += bytes;
    const outage = this.options.outage;
    if (!outage || this.#outageDone || this.#sentBytes < outage.afterBytes) return;
    this.#outageDone = true;
    this.interrupt?.(outage.forMs);
  }

  /** True when object GET bodies must be counted (an outage is to come). */
  get counting(): boolean {
    return this.options.outage !== undefined && !this.#outageDone;
  }

  async #checksum(
    store: ObjectStore,
    key: string,
    size: number,
    mtimeMs: number,
    algorithm: AmzChecksum,
  ): Promise<string> {
    const id = `${algorithm}\n${key}\n${size}\n${mtimeMs}`;
    const known = this.#sums.get(id);
    if (known !== undefined) return known;
    const object = await store.open(key);
    if (!object) return '';
    const running = new RunningChecksum(algorithm);
    if (object.size === 0) await object.close();
    else for await (const chunk of object.stream(0, object.size - 1)) running.update(chunk as Buffer);
    const value = (await running.digest()).toString('base64');
    this.#sums.set(id, value);
    return value;
  }
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
