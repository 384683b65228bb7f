/** Test helpers for the reference server: raw HTTP requests, temporary stores, exact wire expectations. */

import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from '../../src/server/index.js';
import { UrlSigner } from '../../src/server/objects/presign.js';
import type { WireMode } from '../../src/server/wire.js';

/** The signing secret of test servers, so tests can forge, expire and re-sign URLs. */
export const TEST_SECRET = 'test-secret-0123456789abcdef';

/** A signer with the test secret. */
export const testSigner = new UrlSigner(TEST_SECRET);

/** An HTTP answer, read whole. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/**
 * Sends one request with `path` exactly as given (no normalization of `..`, `%2e` or backslashes, unlike
 * fetch), on a fresh connection.
 */
export function rawRequest(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<HttpResult> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends `head` as the raw bytes of a request (no client checks) and resolves with the whole answer. */
export function rawBytes(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(Buffer.from(head, 'latin1')));
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The path and query of an absolute URL the server handed out. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** A server on a fresh temporary store, and how to clean it up. */
export interface TestServer {
  server: ReferenceServer;
  storeDir: string;
  root: string;
  cleanup(): Promise<void>;
}

/** Makes a temporary folder; the caller removes it. */
export async function makeTempDir(prefix = 'mission-server-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Starts a server with the test secret on a new temporary store (optionally prepared by `prepare`). */
export async function startTestServer(
  options: Partial<Omit<ReferenceServerOptions, 'store' | 'storeDir'>> = {},
  prepare?: (storeDir: string) => Promise<void>,
): Promise<TestServer> {
  const root = await makeTempDir();
  const storeDir = join(root, 'store');
  await mkdir(storeDir, { recursive: true });
  if (prepare) await prepare(storeDir);
  const server = await startReferenceServer({ store: storeDir, secret: TEST_SECRET, ...options });
  return {
    server,
    storeDir,
    root,
    async cleanup() {
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Writes a file into a store at its key, with an optional mtime (its ingestion date). */
export async function putStoreFile(
  storeDir: string,
  key: string,
  content: Buffer | string = '',
  mtime?: Date,
): Promise<void> {
  const path = join(storeDir, ...key.split('/'));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  if (mtime) await utimes(path, mtime, mtime);
}

/** The envelope an API route answers with. */
export interface Envelope {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Asserts that `result` carries exactly `envelope` the way `mode` puts it on the wire:
 * `envelope` (HTTP status = statusCode, HTTP body = envelope JSON), `envelope-200` (HTTP 200, envelope JSON),
 * `gateway` (HTTP status = statusCode, envelope headers as HTTP headers, the body itself: a string as text
 * unless the envelope declares JSON, anything else as JSON).
 */
export function expectWire(result: HttpResult, mode: WireMode, envelope: Envelope): void {
  if (mode === 'gateway') {
    expect(result.status).toBe(envelope.statusCode);
    for (const [name, value] of Object.entries(envelope.headers)) {
      expect(result.headers[name.toLowerCase()]).toBe(value);
    }
    const declaresJson = (envelope.headers['Content-Type'] ?? '').startsWith('application/json');
    if (typeof envelope.body === 'string') {
      expect(result.text).toBe(declaresJson ? JSON.stringify(envelope.body) : envelope.body);
    } else {
      expect(JSON.parse(result.text)).toEqual(envelope.body);
    }
    return;
  }
  expect(result.status).toBe(mode === 'envelope' ? envelope.statusCode : 200);
  expect(result.headers['content-type']).toBe('application/json');
  const { requestId, ...sent } = JSON.parse(result.text) as Envelope & { requestId?: unknown };
  // An error's envelope names the request's id, the one answered in X-Request-Id; other answers do not.
  if (envelope.statusCode >= 400) expect(requestId).toBe(result.headers['x-request-id']);
  else expect(requestId).toBeUndefined();
  expect(sent).toEqual(envelope);
}

/** Reads the outcome of an API answer in any wire mode, as a tolerant client would. */
export function outcomeOf(result: HttpResult, mode: WireMode): { statusCode: number; body: unknown } {
  if (mode !== 'gateway') {
    const envelope = JSON.parse(result.text) as Envelope;
    return { statusCode: envelope.statusCode, body: envelope.body };
  }
  const type = String(result.headers['content-type'] ?? '');
  return {
    statusCode: result.status,
    body: type.startsWith('text/plain') ? result.text : JSON.parse(result.text),
  };
}

/** Every wire mode, for `describe.each`. */
export const WIRE_MODE_LIST: readonly WireMode[] = ['envelope', 'envelope-200', 'gateway'];

/** Polls `check` until it returns true, at most `attempts` times `intervalMs` apart; false if it never did. */
export async function eventually(
  check: () => Promise<boolean>,
  attempts = 200,
  intervalMs = 10,
): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return false;
}
