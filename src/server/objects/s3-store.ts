/**
 * The S3 store: objects in a bucket (AWS S3 or any S3-compatible store) below an optional prefix, reached
 * through the AWS SDK v3. Its pre-signed URLs point at the store itself, so bytes never pass through the server.
 * Only what AWS S3 does is relied on: path-style addressing only for a custom endpoint, no header that the
 * URL did not sign, and no conditional PUT for "one writer wins" (that is the index's reservation).
 */
import { PassThrough, type Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { parsePath } from '../../naming/names.js';
import type { Digests } from './checksums.js';
import {
  type ConfirmExpectation,
  type ConfirmedObject,
  type ConfirmsUploads,
  namingProblem,
  type ObjectStore,
  type OpenObject,
  type PresignOptions,
  PutRejected,
  type PutResult,
  type SignedMethod,
  type StoredObject,
} from './object-store.js';
import { URL_LIFETIME_SECONDS } from './presign.js';
import { DigestStream, digestsFromMetadata, etagIsMd5, md5FromEtag, metadataOf } from './s3-digests.js';
import { s3Failure, statusOf } from './s3-failures.js';
import { ObjectUnsettled } from './unsettled.js';

/** How long connecting to the store may take. */
const S3_CONNECT_TIMEOUT_MS = 5_000;
/** How long the store may take to answer a request (its headers; a body's bytes are not bounded here). */
const S3_REQUEST_TIMEOUT_MS = 5_000;

/** Where a bucket is and how to reach it. */
export interface S3StoreOptions {
  /** `s3://BUCKET[/PREFIX]`. */
  url: string;
  /** A custom endpoint (an S3-compatible store); addressed path-style. */
  endpoint?: string | undefined;
  /** Default `us-east-1`. */
  region?: string | undefined;
  /** Explicit credentials (tests); otherwise the standard AWS chain (environment, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/** The bucket and key prefix (empty, or ending in `/`) of an `s3://` URL. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match)
    throw new Error(`Invalid store ${JSON.stringify(url)}: give s3://BUCKET or s3://BUCKET/PREFIX.`);
  const rest = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1] as string, prefix: rest === '' ? '' : `${rest}/` };
}

/** Objects in an S3 bucket; uploads go straight to it and are confirmed once they arrived. */
export class S3Store implements ObjectStore, ConfirmsUploads {
  readonly location: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #endpoint: string;

  constructor(options: S3StoreOptions) {
    const { bucket, prefix } = parseS3Url(options.url);
    this.#bucket = bucket;
    this.#prefix = prefix;
    this.location = `s3://${bucket}${prefix === '' ? '' : `/${prefix.slice(0, -1)}`}`;
    this.#endpoint = options.endpoint ?? 'AWS S3';
    this.#client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Send and sign no checksum the store did not ask for: a pre-signed PUT would otherwise carry the
      // CRC-32 of an empty body, which AWS S3 holds against the real one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A store that stops answering fails the request (then answered 503) rather than holding it for ever:
      // within two attempts of the request bound.
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: S3_CONNECT_TIMEOUT_MS,
        requestTimeout: S3_REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
      },
    });
  }

  #key(key: string): string {
    return `${this.#prefix}${key}`;
  }

  #where(): string {
    return `${this.location} (endpoint ${this.#endpoint})`;
  }

  async check(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      throw s3Failure(error, this.#where(), this.#bucket);
    }
  }

  async #head(key: string) {
    try {
      return await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async occupied(key: string): Promise<boolean> {
    return (await this.#head(key)) !== undefined;
  }

  /** The object with the checksums one HEAD tells: those recorded with it, or the MD5 a plain ETag is. */
  async head(key: string): Promise<StoredObject | undefined> {
    const file = parsePath(key);
    const head = await this.#head(key);
    if (!head) return undefined;
    const known = digestsFromMetadata(head.Metadata);
    const md5 = known.md5 ?? (etagIsMd5(head) ? md5FromEtag(head.ETag) : undefined);
    return {
      file,
      size: head.ContentLength ?? 0,
      mtimeMs: head.LastModified?.getTime() ?? Date.now(),
      ...known,
      ...(md5 ? { md5 } : {}),
    };
  }

  /** Keeps the checksums with the object (its user metadata, by a copy onto itself); best effort. */
  async #recordDigests(key: string, digests: Digests, etag: string | undefined): Promise<void> {
    const Key = this.#key(key);
    await this.#client
      .send(
        new CopyObjectCommand({
          Bucket: this.#bucket,
          Key,
          CopySource: `${this.#bucket}/${Key.split('/').map(encodeURIComponent).join('/')}`,
          MetadataDirective: 'REPLACE',
          Metadata: metadataOf(digests),
          ContentType: 'application/octet-stream',
          ...(etag ? { CopySourceIfMatch: etag } : {}),
        }),
      )
      .catch(() => undefined);
  }

  /**
   * The object and the MD5 of its bytes: from its HEAD when the store checked the Content-MD5 the URL signed;
   * otherwise its checksums, those recorded with it or computed now from its bytes (once, at confirmation, never
   * on a download) and recorded. Bytes that differ from the signed Content-MD5, or from an ETag that is a plain
   * MD5, are refused.
   */
  async confirm(key: string, expected: ConfirmExpectation = {}): Promise<ConfirmedObject | undefined> {
    const file = parsePath(key);
    const head = await this.#head(key);
    if (!head) return undefined;
    const size = head.ContentLength ?? 0;
    const mtimeMs = head.LastModified?.getTime() ?? Date.now();
    // The store refused any body that did not match the Content-MD5 the URL signed, and a single-part ETag is
    // that MD5: the HEAD proves the bytes, with no read of them and no copy (what keeps answers that wait for
    // an upload short while many arrive at once).
    const etagMd5 = md5FromEtag(head.ETag);
    if (expected.md5 && etagMd5?.equals(expected.md5)) return { file, size, mtimeMs, md5: etagMd5 };
    return this.#readDigests(key, head, expected);
  }

  async confirmFromHead(key: string, md5: Buffer): Promise<ConfirmedObject | 'absent' | undefined> {
    const head = await this.#head(key);
    if (!head) return 'absent';
    const etagMd5 = md5FromEtag(head.ETag);
    if (!etagMd5?.equals(md5)) return undefined;
    const mtimeMs = head.LastModified?.getTime() ?? Date.now();
    return { file: parsePath(key), size: head.ContentLength ?? 0, mtimeMs, md5: etagMd5 };
  }

  /** The object with the checksums of its bytes: those recorded with it, or read once and recorded now. */
  async #readDigests(
    key: string,
    head: HeadObjectCommandOutput,
    expected: ConfirmExpectation = {},
  ): Promise<PutResult> {
    const file = parsePath(key);
    const size = head.ContentLength ?? 0;
    const mtimeMs = head.LastModified?.getTime() ?? Date.now();
    const etagMd5 = md5FromEtag(head.ETag);
    const known = digestsFromMetadata(head.Metadata);
    let digests: Digests;
    if (known.md5 && known.sha256 && known.crc32 !== undefined) {
      digests = { md5: known.md5, sha256: known.sha256, crc32: known.crc32 };
    } else {
      const got = await this.#client
        .send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), IfMatch: head.ETag }))
        .catch((error: unknown) => {
          // Replaced or removed since its HEAD: an upload still under way.
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          if (status === 412 || status === 404) {
            throw new ObjectUnsettled(`${key} changed while it was read.`, { cause: error });
          }
          throw error;
        });
      const hashing = new DigestStream(size);
      const body = got.Body as Readable;
      await new Promise<void>((resolvePromise, reject) => {
        hashing.on('error', () => body.destroy());
        body.on('error', reject).pipe(hashing).on('error', reject).on('finish', resolvePromise);
        hashing.resume();
      }).catch((error: unknown) => {
        if (!hashing.problem) throw error;
      });
      // Bytes that do not add up are not a verdict on the upload: the object may have changed while it was
      // read (an S3-compatible store may even show an object while it is still being written), so the
      // confirmation is tried again on a later pass. Only complete bytes are recorded.
      if (hashing.problem) {
        throw new ObjectUnsettled(`${key} changed while it was read: ${hashing.problem.message}`);
      }
      digests = hashing.digests();
      if (etagMd5 && !etagMd5.equals(digests.md5)) {
        throw new ObjectUnsettled(`${key} changed while it was read: its bytes do not match its ETag.`);
      }
      await this.#recordDigests(key, digests, head.ETag);
    }
    if (expected.md5 && !expected.md5.equals(digests.md5)) {
      throw new PutRejected(
        400,
        `The bytes of ${key} do not match the Content-MD5 its upload was signed with.`,
      );
    }
    return { file, size, mtimeMs, ...digests };
  }

  async open(key: string): Promise<OpenObject | undefined> {
    const head = await this.#head(key);
    if (!head) return undefined;
    const size = head.ContentLength ?? 0;
    const etag = head.ETag;
    const known = digestsFromMetadata(head.Metadata);
    return {
      size,
      mtime: head.LastModified ?? new Date(),
      digests: async () => {
        if (known.md5 && known.crc32 !== undefined) return { ...known, md5: known.md5, crc32: known.crc32 };
        return this.#readDigests(key, head);
      },
      stream: (start, end) => {
        const out = new PassThrough({ highWaterMark: 1024 * 1024 });
        this.#client
          .send(
            new GetObjectCommand({
              Bucket: this.#bucket,
              Key: this.#key(key),
              Range: `bytes=${start}-${end}`,
              ...(etag ? { IfMatch: etag } : {}),
            }),
          )
          .then(
            (got) => (got.Body as Readable).on('error', (error) => out.destroy(error)).pipe(out),
            (error: unknown) => out.destroy(error as Error),
          );
        return out;
      },
      close: async () => undefined,
    };
  }

  async list(prefix = '', onSkipped?: (key: string, problem: string) => void): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.#client
        .send(
          new ListObjectsV2Command({
            Bucket: this.#bucket,
            Prefix: this.#key(prefix),
            ...(token ? { ContinuationToken: token } : {}),
          }),
        )
        .catch((error: unknown) => {
          // The store's failure, named as the store's: listing is what start-up and --reindex do first.
          throw s3Failure(error, this.#where(), this.#bucket, `listing after ${found.length} objects`);
        });
      for (const entry of page.Contents ?? []) {
        const key = (entry.Key ?? '').slice(this.#prefix.length);
        let object: StoredObject;
        try {
          object = {
            file: parsePath(key),
            size: entry.Size ?? 0,
            mtimeMs: entry.LastModified?.getTime() ?? 0,
            md5: md5FromEtag(entry.ETag),
          };
        } catch {
          onSkipped?.(key, namingProblem(key) ?? 'breaks the naming rules');
          continue;
        }
        found.push(object);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  async delete(key: string): Promise<boolean> {
    if (!(await this.occupied(key))) return false;
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    return true;
  }

  /** A SigV4 URL on the store itself; a PUT's Content-MD5 is signed, so the store takes only those bytes. */
  async presign(method: SignedMethod, key: string, options: PresignOptions): Promise<string> {
    const expiresIn = options.lifetimeSeconds ?? URL_LIFETIME_SECONDS[method];
    const Bucket = this.#bucket;
    const Key = this.#key(key);
    if (method === 'GET') {
      // Nothing signed but the host: a URL that signed a header (x-amz-checksum-mode, say) would be refused to
      // every client that simply follows the redirect (curl -L, a browser). The object's checksums reach this
      // tool another way: /download writes them into the fragment of the URL it hands out.
      return getSignedUrl(this.#client, new GetObjectCommand({ Bucket, Key }), { expiresIn });
    }
    const command = new PutObjectCommand({
      Bucket,
      Key,
      ...(options.contentMd5 ? { ContentMD5: options.contentMd5 } : {}),
    });
    return getSignedUrl(this.#client, command, {
      expiresIn,
      ...(options.contentMd5 ? { signableHeaders: new Set(['content-md5']) } : {}),
    });
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}
