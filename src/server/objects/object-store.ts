/**
 * The seam between the routes and where objects live. The routes see only this interface; the folder store
 * (`folder-store.ts`) is one implementation. A store never replaces an object: a name is written once.
 */
import type { Readable } from 'node:stream';
import type { MissionFile } from '../../naming/names.js';
import type { Digests } from './checksums.js';

/** A stored object found by a listing or written by a PUT. */
export interface StoredObject {
  file: MissionFile;
  size: number;
  mtimeMs: number;
}

/** An object a PUT stored, with the checksums of its bytes. */
export interface PutResult extends StoredObject, Digests {}

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
}

/** Where the objects of the archive live. */
export interface ObjectStore {
  /** Where the store is, for messages (a folder, a bucket); never with credentials. */
  readonly location: string;
  /** True when something occupies the key's place (an object, or anything in the way of one). */
  occupied(key: string): Promise<boolean>;
  /**
   * Stores exactly `length` bytes of `body` at `key`, whole or not at all; a key already taken is refused
   * (`PutRejected` with 409), so of two writers of one name exactly one wins.
   */
  put(key: string, body: Readable, length: number, options?: PutOptions): Promise<PutResult>;
  /** Opens an object for reading; undefined when there is none. */
  open(key: string): Promise<OpenObject | undefined>;
  /** The size and time of an object; undefined when there is none. */
  head(key: string): Promise<StoredObject | undefined>;
  /** Every object whose key starts with `prefix` (all with none); entries that break the naming rules are skipped. */
  list(prefix?: string): Promise<StoredObject[]>;
  /** Removes an object; false when there was none. */
  delete(key: string): Promise<boolean>;
  /** A URL a client can GET or PUT the object at, without credentials of its own. */
  presign(method: SignedMethod, key: string, options: PresignOptions): string;
}
