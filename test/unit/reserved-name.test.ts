/**
 * A name taken at `/upload`: stored, or reserved by an unfinished upload. The client reads which from what the
 * service states (today's `error` name; else the specification's `Retry-After`, which only a reserved name's 409
 * carries) and the words only where the service states neither.
 */
import type { ServerResponse } from 'node:http';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import type { Reservation } from '../../src/server/metadata/metadata-index.js';
import { fileExistsResponse, nameReservedResponse } from '../../src/server/routes/file-routes.js';
import { type ApiResponse, sendApiResponse, WIRE_MODES, type WireMode } from '../../src/server/wire.js';
import { HttpClient, takenNameCode } from '../../src/service/client.js';
import { isNameReserved, reservedMessage, tryLaterHint } from '../../src/upload/stored.js';
import { MswDispatcher } from '../helpers/msw-dispatcher.js';

const API = 'http://api.test';
const KEY = 'imap/mag/l1a/2025/01/imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf';
const NOW = Date.parse('2025-03-01T12:00:00Z');
const HELD = {
  key: KEY,
  reservedAtMs: NOW - 60_000,
  releaseAtMs: NOW + 90_000,
} as unknown as Reservation;

/** A 409 as a service sends it, and what it means. */
interface Taken {
  name: string;
  answer: () => ApiResponse;
  reserved: boolean;
}

/** The specification's "already exists": a string, no Retry-After. */
const specExists = (): ApiResponse => ({
  statusCode: 409,
  headers: { 'Content-Type': 'text/plain' },
  body: `http://store.test/${KEY} already exists.`,
});

const CASES: readonly Taken[] = [
  {
    name: "today's reserved name (UploadInProgress)",
    answer: () => nameReservedResponse(HELD, 'api-key'),
    reserved: true,
  },
  { name: "today's stored file (FileAlreadyExists)", answer: () => fileExistsResponse(KEY), reserved: false },
  {
    name: "the specification's reserved name (a string and Retry-After)",
    answer: () => nameReservedResponse(HELD, 'plain'),
    reserved: true,
  },
  { name: "the specification's stored file (a string, no Retry-After)", answer: specExists, reserved: false },
  {
    name: 'UploadInProgress in other words',
    answer: () => ({
      statusCode: 409,
      headers: { 'Content-Type': 'application/json', 'Retry-After': '90' },
      body: { error: 'UploadInProgress', message: `${KEY} is being uploaded; its bytes have not arrived.` },
    }),
    reserved: true,
  },
  {
    name: 'a reserved name in other words, with Retry-After',
    answer: () => ({
      statusCode: 409,
      headers: { 'Content-Type': 'text/plain', 'Retry-After': '90' },
      body: `${KEY} is held by an upload still under way.`,
    }),
    reserved: true,
  },
  {
    name: 'FileAlreadyExists whose words mention a reservation',
    answer: () => ({
      statusCode: 409,
      headers: { 'Content-Type': 'application/json' },
      body: { error: 'FileAlreadyExists', message: `${KEY} is stored (it was not stored yet an hour ago).` },
    }),
    reserved: false,
  },
  {
    name: 'a service that states neither (last resort: the words)',
    answer: () => ({
      statusCode: 409,
      headers: { 'Content-Type': 'text/plain' },
      body: `${KEY} is reserved: an upload of this name is not stored yet.`,
    }),
    reserved: true,
  },
];

/** `answer` as the reference server writes it in `mode` (its own writer, into a captured response). */
function onTheWire(answer: ApiResponse, mode: WireMode): Response {
  let status = 0;
  let headers: Record<string, string> = {};
  let bytes: Buffer = Buffer.alloc(0);
  const captured = {
    getHeader: () => undefined,
    writeHead(code: number, given: Record<string, string>) {
      status = code;
      headers = given;
    },
    end(chunk?: Buffer) {
      if (chunk) bytes = chunk;
    },
  };
  sendApiResponse(captured as unknown as ServerResponse, answer, mode);
  return new HttpResponse(new Uint8Array(bytes), { status, headers });
}

/** A client of a service answering `answer` to every `/upload`, in the wire mode `mode`. */
function serviceAnswering(answer: ApiResponse, mode: WireMode = 'gateway'): HttpClient {
  const dispatcher = new MswDispatcher([http.get(`${API}/upload/*`, () => onTheWire(answer, mode))]);
  return new HttpClient({ url: API, dispatcher, retryBaseMs: 1 });
}

async function refusal(client: HttpClient): Promise<ApiError> {
  const error = await client.presignUpload(KEY).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('a 409 of /upload: stored or reserved, from what the service states', () => {
  it.each(CASES.flatMap((taken) => WIRE_MODES.map((mode) => ({ ...taken, mode }))))(
    '$name ($mode)',
    async ({ answer, reserved, mode }) => {
      const error = await refusal(serviceAnswering(answer(), mode));
      expect(error.status).toBe(409);
      expect(isNameReserved(error)).toBe(reserved);
      expect(error.code).toBe(reserved ? 'E_NAME_RESERVED' : 'E_ALREADY_EXISTS');
    },
  );

  it('reads the answer itself: the error name wins over Retry-After and over the words', () => {
    const headers = { 'retry-after': '5' };
    expect(takenNameCode({ status: 409, headers, body: { error: 'FileAlreadyExists' } })).toBe(
      'E_ALREADY_EXISTS',
    );
    expect(takenNameCode({ status: 409, headers, body: 'taken' })).toBe('E_NAME_RESERVED');
    expect(takenNameCode({ status: 409, headers: {}, body: 'taken' })).toBe('E_ALREADY_EXISTS');
  });
});

describe('what the upload says of a reserved name', () => {
  it('tells when the name is free again from Retry-After, not from the words', async () => {
    const answer: ApiResponse = {
      statusCode: 409,
      headers: { 'Content-Type': 'application/json', 'Retry-After': '90' },
      body: {
        error: 'UploadInProgress',
        message: 'The name is held; free again at 1999-01-01T00:00:00Z if unused.',
      },
    };
    const error = await refusal(serviceAnswering(answer));
    expect(error.retryAfterMs).toBe(90_000);
    const hint = tryLaterHint(error, NOW);
    expect(hint).toContain('Try again after 2025-03-01T12:01:30Z;');
    expect(hint).not.toContain('1999');
  });

  it("keeps the reference server's time where the service states no Retry-After (the last resort)", () => {
    const message = `upload ${KEY}: 409 ${KEY} is reserved: an upload of this name started at 2025-03-01T11:59:00.000Z and is not stored yet; the name is free again at 2025-03-01T12:01:30.000Z if its bytes never arrive.`;
    const error = new ApiError(
      { method: 'GET', url: `${API}/upload/${KEY}`, status: 409, message },
      { code: 'E_NAME_RESERVED' },
    );
    expect(tryLaterHint(error, NOW)).toContain('Try again after 2025-03-01T12:01:30.000Z;');
    expect(reservedMessage(error)).toMatch(
      /^not stored: the name is reserved: an upload of this name started/,
    );
  });

  it('says a reserved name in other words whole, and that no file is stored', async () => {
    const error = await refusal(serviceAnswering(CASES[4]?.answer() as ApiResponse));
    expect(reservedMessage(error)).toBe(
      `not stored: the name is reserved by an upload that has not finished (the service said: ${KEY} is being uploaded; its bytes have not arrived.)`,
    );
    expect(tryLaterHint(error, NOW)).toMatch(/^No file of this name is stored/);
  });
});
