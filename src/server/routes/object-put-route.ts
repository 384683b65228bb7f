/** The PUT object route: an upload checked, stored, and a store's refusal answered while its body arrives. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STORE_ERRNO_HEADER } from '../../core/errors.js';
import type { ServerContext } from '../context.js';
import { etagOf } from '../objects/checksums.js';
import { StoreWriteError } from '../objects/folder-write.js';
import { PutRejected, type PutResult, takesUploads } from '../objects/object-store.js';
import { plainText, sendText } from './object-text.js';

/**
 * After answering an upload the store refused while its body is still arriving, the rest is read and thrown
 * away for at most this long (and until a pause of `DRAIN_IDLE_MS`) before the connection is closed: a
 * client that is still sending would otherwise meet a reset and never read the answer (nginx's
 * lingering_time and lingering_timeout are 30 s and 5 s for the same reason).
 */
const DRAIN_LIMIT_MS = 30_000;
const DRAIN_IDLE_MS = 5_000;

/** A failure an object route answered itself, for the request log. */
export interface AnsweredFailure {
  error: unknown;
  /** True once the whole answer was handed to the connection, even if the client hangs up before it is ended. */
  written: boolean;
}

/**
 * What an object route tells the request log of one request, filled in as it happens: the log line is written
 * when the connection closes, which may come before the route's promise settles.
 */
export interface ObjectOutcome {
  /** The store failure the route answered itself (a 507 or 500 it sent), if any. */
  answered?: AnsweredFailure | undefined;
  /** Body bytes an object GET handed to the connection. */
  sent?: number | undefined;
}

/**
 * The status and plain-text reason of a write the store refused, by errno: a full store is S3's and WebDAV's
 * 507 Insufficient Storage (the client may try again once there is room); anything else is the server's
 * fault, a 500 that names the errno so the operator knows where to look.
 */
export function storeFailureAnswer(code: string): { status: 500 | 507; message: string } {
  const nothing = 'nothing was stored.';
  switch (code) {
    case 'ENOSPC':
      return { status: 507, message: `The store is full (ENOSPC); ${nothing}` };
    case 'EDQUOT':
      return { status: 507, message: `The store's disk quota is used up (EDQUOT); ${nothing}` };
    case 'EROFS':
      return { status: 500, message: `The store is read-only (EROFS); ${nothing}` };
    case 'EACCES':
    case 'EPERM':
      return { status: 500, message: `The server may not write to the store (${code}); ${nothing}` };
    case 'ENAMETOOLONG':
      return {
        status: 500,
        message: `The store's folder is too deep for this key: the path is longer than the file system allows (ENAMETOOLONG); ${nothing}`,
      };
    case 'EIO':
      return { status: 500, message: `The store's disk failed to write (EIO); ${nothing}` };
    case 'EFBIG':
      return {
        status: 500,
        message: `The object is larger than the store may write in one file (EFBIG); ${nothing}`,
      };
    default:
      return { status: 500, message: `Writing to the store failed (${code}); ${nothing}` };
  }
}

/** Stores the body of a PUT at `key` and answers with its ETag, or with why it was not stored. */
export async function putObject(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
  outcome: ObjectOutcome,
): Promise<void> {
  const store = context.store;
  if (!takesUploads(store)) {
    sendText(res, 405, 'This store takes no uploads through the server; use the URL /upload gives.');
    return;
  }
  const upload = await checkUpload(context, req, res, key);
  if (!upload) return;
  const expectsContinue = /^100-continue$/i.test(req.headers.expect ?? '');
  let continued = false;
  let stored: PutResult;
  try {
    stored = await context.track(
      store.put(key, req, upload.length, {
        md5: upload.md5,
        // Only now ask for the body: a refused upload, or a store that cannot even open a file, never sends it.
        onReady: () => {
          if (!expectsContinue || res.destroyed) return;
          res.writeContinue();
          continued = true;
        },
      }),
    );
  } catch (error) {
    const bodyComing = !req.complete && !(expectsContinue && !continued);
    await answerPutError(context, req, res, error, bodyComing, outcome);
    return;
  }
  await context.index.add(stored);
  res.writeHead(200, { ETag: etagOf(stored.md5), 'Content-Length': '0' });
  res.end();
}

/**
 * The length and Content-MD5 of an upload whose headers are sound and whose key is free, or undefined once the
 * refusal was answered: 411 without a Content-Length, 400 for a malformed one or a malformed Content-MD5, 409
 * for a key already taken.
 */
async function checkUpload(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
): Promise<{ length: number; md5: Buffer | undefined } | undefined> {
  const lengthHeader = req.headers['content-length'];
  if (lengthHeader === undefined || req.headers['transfer-encoding'] !== undefined) {
    sendText(res, 411, 'Content-Length required: send the object with a Content-Length, not chunked.');
    return undefined;
  }
  if (!/^\d{1,15}$/.test(lengthHeader)) {
    sendText(res, 400, 'Content-Length must be a whole number of bytes.');
    return undefined;
  }
  let md5: Buffer | undefined;
  const md5Raw = req.headers['content-md5'];
  const md5Header = Array.isArray(md5Raw) ? md5Raw.join(',') : md5Raw;
  if (md5Header !== undefined) {
    md5 = Buffer.from(md5Header, 'base64');
    if (md5.length !== 16 || md5.toString('base64') !== md5Header) {
      sendText(res, 400, 'Content-MD5 must be the base64 of the 16-byte MD5 digest of the body.');
      return undefined;
    }
  }
  if ((await context.index.has(key)) || (await context.store.occupied(key))) {
    sendText(res, 409, `${key} already exists.`);
    return undefined;
  }
  return { length: Number(lengthHeader), md5 };
}

/**
 * Answers a PUT the store did not take, when there is still a connection to answer on: the store's refusal
 * with its status, a failed write with its errno's. `bodyComing`: the client is still sending the body.
 */
async function answerPutError(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
  bodyComing: boolean,
  outcome: ObjectOutcome,
): Promise<void> {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  if (error instanceof PutRejected) {
    // A stalled client gets its answer and loses the connection: it is not sending the rest anyway.
    sendText(res, error.status, error.message, error.status === 408 ? { Connection: 'close' } : {});
    return;
  }
  if (error instanceof StoreWriteError) {
    const { status, message } = storeFailureAnswer(error.code);
    await context.track(answerFailure(req, res, status, message, error, bodyComing, outcome));
    return;
  }
  // Mostly the client went away: the store removed the partial upload and there is no one left to answer.
  if (req.destroyed) {
    res.destroy();
    return;
  }
  throw error;
}

/**
 * Answers a write the store refused. When the body is still coming, the answer goes out at once with
 * `Connection: close`, and the rest of the body is read and dropped (bounded) before the connection is
 * ended, so that the client reads the answer rather than a reset and does not send the upload again.
 */
function answerFailure(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  error: unknown,
  bodyComing: boolean,
  outcome: ObjectOutcome,
): Promise<void> {
  const failure: AnsweredFailure = { error, written: false };
  outcome.answered = failure;
  const { body, headers } = plainText(message);
  // The errno as a field of the answer: the client's failure policy reads it, never the words.
  if (error instanceof StoreWriteError) headers[STORE_ERRNO_HEADER] = error.code;
  // A body not read to its end leaves the connection unusable for another request.
  if (!req.complete) headers.Connection = 'close';
  if (!bodyComing) {
    res.writeHead(status, headers);
    res.end(body);
    return Promise.resolve();
  }
  return new Promise((resolvePromise) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      clearTimeout(idle);
      req.off('data', onData).off('end', finish).off('close', finish);
      if (!res.destroyed) res.end();
      resolvePromise();
    };
    const limit = setTimeout(finish, DRAIN_LIMIT_MS);
    const idle = setTimeout(finish, DRAIN_IDLE_MS);
    const onData = () => idle.refresh();
    res.writeHead(status, headers);
    // The whole answer, without ending the response: ending it would close the connection at once.
    res.write(body, () => {
      failure.written = true;
    });
    req.on('data', onData).on('end', finish).on('close', finish);
    req.resume();
  });
}
