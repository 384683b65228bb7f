/**
 * `/upload` on a store whose URLs point at itself: the name is reserved in the index (one statement, so of
 * two servers exactly one gets it) before the URL is signed; the object is confirmed after it arrives.
 */
import type { IncomingMessage } from 'node:http';
import type { ServerContext } from '../context.js';
import type { Reservation } from '../metadata/metadata-index.js';
import { type ApiResponse, messageResponse } from '../wire.js';

/** Reads a `Content-MD5` header: the raw digest, undefined when absent, null when malformed. */
function contentMd5(req: IncomingMessage): Buffer | undefined | null {
  const header = req.headers['content-md5'];
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  const digest = Buffer.from(text, 'base64');
  return digest.length === 16 && digest.toString('base64') === text ? digest : null;
}

/**
 * Reserves `key` and answers with a pre-signed PUT on the store (its Content-MD5 signed when the request
 * carried one). A name that is taken is answered `exists()` when it is stored (an upload of it that reached the
 * store is confirmed first) or in the store without a reservation (put there by another tool), and
 * `reserved(held)` when an upload holds it whose bytes have not arrived: unless that upload was signed with the
 * same Content-MD5 as this request's, which is the same upload asked again (a re-run after a crash) and gets a
 * fresh URL for the same reservation.
 */
export async function reserveUpload(
  context: ServerContext,
  req: IncomingMessage,
  key: string,
  exists: () => ApiResponse,
  reserved: (held: Reservation) => ApiResponse,
): Promise<ApiResponse> {
  const md5 = contentMd5(req);
  if (md5 === null) {
    return messageResponse(400, 'Content-MD5 must be the base64 of the 16-byte MD5 digest of the file.');
  }
  const asked = Date.now();
  let state = await context.index.state(key);
  // An upload of this name that has reached the store is confirmed first (only this one, bounded in time).
  if (
    state !== undefined &&
    state !== 'stored' &&
    (await context.uploads?.awaitReservations([state], asked))
  ) {
    state = await context.index.state(key);
  }
  if (state === 'stored') return exists();
  const held = state;
  const heldNow = held !== undefined && held.releaseAtMs > Date.now();
  if (!heldNow && (await context.store.occupied(key))) return exists();
  // `--url-life` shortens the store's upload URLs too, and with them how long a lost upload holds the name.
  const lifetime = context.faults.options.urlLifeSeconds ?? context.uploadUrlLifetimeSeconds;
  const urlExpiresAtMs = Date.now() + lifetime * 1000;
  const reservation = await context.index.reserve(key, {
    urlExpiresAtMs,
    releaseAtMs: urlExpiresAtMs + context.reservationGraceMs,
    md5,
  });
  if (!reservation) {
    const now = await context.index.state(key);
    return now !== undefined && now !== 'stored' ? reserved(now) : exists();
  }
  const url = await context.store.presign('PUT', key, {
    baseUrl: context.baseUrl(req),
    lifetimeSeconds: lifetime,
    contentMd5: md5?.toString('base64'),
  });
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: url };
}
