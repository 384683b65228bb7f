/**
 * The seam between the routes and where objects live. The routes see only this interface; the folder store
 * (`folder-store.ts`) and the S3 store (`s3-store.ts`) implement it. A store never replaces an object: a name
 * is written once.
 *
 * `ObjectStore` is what every store does. How uploads reach a store is an optional capability, found by a type
 * guard rather than a mode flag: a store that takes the bytes itself (`TakesUploads`: its upload URLs point at
 * the server, which hands the body to `put`), or one whose upload URLs point at the store itself
 * (`ConfirmsUploads`: the server reserves the name, and confirms the object once it arrived).
 */
import type { Readable } from 'node:stream';
import { ValidationError } from '../../core/errors.js';
import { type MissionFile, parsePath } from '../../naming/names.js';
import type { Digests } from './checksums.js';

/** Why a PUT or a confirmation did not store its object, when the request (or the uploaded bytes) is to blame. */
export class PutRejected extends Error {
  constructor(
    readonly status: 400 | 408 | 409,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Which naming rule a key breaks, in one line that does not repeat the key (`the month folder is "02" but the
 * name's start date is in month 01; expected …`); undefined when it breaks none.
 */
export function namingProblem(key: string): string | undefined {
  try {
    parsePath(key);
    return undefined;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.problems.map((problem) => problem.replace(`Invalid path ${key}: `, '')).join(' ');
  }
}

/** A stored object found by a listing or written by a PUT. */
export interface StoredObject {
  file: MissionFile;
  size: number;
  mtimeMs: number;
  /** The raw MD5 of the bytes, when known (a PUT, a confirmation, a listing whose ETag is a plain MD5). */
  md5?: Buffer | undefined;
  /** The raw SHA-256 of the bytes, when known. */
  sha256?: Buffer | undefined;
}

/** An object a PUT stored (or a confirmation found), with the checksums of its bytes. */
export interface PutResult extends StoredObject, Digests {
  md5: Buffer;
}

/** What a confirmation expects of an object a client sent straight to the store. */
export interface ConfirmExpectation {
  /** The raw Content-MD5 the upload URL was signed with, if any. */
  md5?: Buffer | undefined;
}

/** How a PUT body is taken in. */
export interface PutOptions {
  /** The raw Content-MD5 digest the client sent, checked against the bytes. */
  md5?: Buffer | undefined;
  /** Called once the store is ready and before the body is read (the route sends 100 Continue then). */
  onReady?: (() => void) | undefined;
}

/** An object opened for reading: size and time fixed at opening, bytes read by range, closed once. */
export interface OpenObject {
  readonly size: number;
  readonly mtime: Date;
  /** The checksums of the object's bytes (stored at upload, or computed once and kept). */
  digests(): Promise<Digests>;
  /** The bytes from `start` to `end` inclusive; the stream closes the object when it ends or fails. */
  stream(start: number, end: number): Readable;
  /** Closes an object whose bytes are not streamed. */
  close(): Promise<void>;
}

/** The methods a pre-signed URL may be issued for. */
export type SignedMethod = 'GET' | 'PUT';

/** What a pre-signed URL is made for. */
export interface PresignOptions {
  /** The address clients reached the server at (stores that serve through the server sign URLs below it). */
  baseUrl: string;
  /** Seconds the URL is valid; default the store's own for the method. */
  lifetimeSeconds?: number | undefined;
  /** The base64 Content-MD5 a PUT URL is signed with, so the store refuses other bytes. */
  contentMd5?: string | undefined;
}

/** Where the objects of the archive live: what every store does. */
export interface ObjectStore {
  /** Where the store is, for messages (a folder, a bucket); never with credentials. */
  readonly location: string;
  /** Resolves when the store answers (its folder or bucket is there and may be used); rejects saying why not. */
  check(): Promise<void>;
  /** True when something occupies the key's place (an object, or anything in the way of one). */
  occupied(key: string): Promise<boolean>;
  /** Opens an object for reading; undefined when there is none. */
  open(key: string): Promise<OpenObject | undefined>;
  /** The size and time of an object; undefined when there is none. */
  head(key: string): Promise<StoredObject | undefined>;
  /**
   * Every object whose key starts with `prefix` (all with none); entries that break the naming rules are
   * skipped, and named to `onSkipped` when given, with the rule each breaks (`namingProblem`).
   */
  list(prefix?: string, onSkipped?: (key: string, problem: string) => void): Promise<StoredObject[]>;
  /** Removes an object; false when there was none. */
  delete(key: string): Promise<boolean>;
  /** A URL a client can GET or PUT the object at, without credentials of its own. */
  presign(method: SignedMethod, key: string, options: PresignOptions): Promise<string>;
  /** Lets go of connections; the store is not used after. */
  close(): Promise<void>;
}

/**
 * A store that takes an upload's bytes itself: its PUT URLs point at the server's object routes, which hand
 * the body to `put`.
 */
export interface TakesUploads {
  /**
   * Stores exactly `length` bytes of `body` at `key`, whole or not at all; a key already taken is refused
   * (`PutRejected` with 409), so of two writers of one name exactly one wins.
   */
  put(key: string, body: Readable, length: number, options?: PutOptions): Promise<PutResult>;
}

/**
 * A store whose PUT URLs point at the store itself, so uploads bypass the server: the name is reserved in the
 * index before the URL is signed, and the object is confirmed (`confirm`) once it has arrived.
 */
export interface ConfirmsUploads {
  /**
   * The object at `key` with the MD5 of its bytes, undefined when there is none. Bytes that came with a signed
   * Content-MD5 the store checked itself (a single-part ETag equal to it) are confirmed from their HEAD alone;
   * others are read once, and their checksums recorded with them. Rejects with `PutRejected` 400 when the bytes
   * do not match `expected`.
   */
  confirm(key: string, expected?: ConfirmExpectation): Promise<ConfirmedObject | undefined>;
  /**
   * What one look at the object (a HEAD) says of an upload signed with Content-MD5 `md5`: `'absent'`, the
   * object when the store checked those bytes itself, or undefined when only `confirm` can tell. Optional: a
   * store without it is always asked `confirm`.
   */
  confirmFromHead?(key: string, md5: Buffer): Promise<ConfirmedObject | 'absent' | undefined>;
}

/** An object a confirmation found: its MD5 always, its other checksums when they were computed. */
export type ConfirmedObject = StoredObject & { md5: Buffer };

/** True when the store takes upload bytes itself. */
export function takesUploads(store: ObjectStore): store is ObjectStore & TakesUploads {
  return typeof (store as ObjectStore & Partial<TakesUploads>).put === 'function';
}

/** True when uploads go straight to the store and are confirmed once they arrived. */
export function confirmsUploads(store: ObjectStore): store is ObjectStore & ConfirmsUploads {
  return typeof (store as ObjectStore & Partial<ConfirmsUploads>).confirm === 'function';
}
