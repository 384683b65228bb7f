/** The object routes' entry (`/objects/<key>`): method, key and signature checked, then GET/HEAD or PUT. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ValidationError } from '../../core/errors.js';
import { parsePath } from '../../naming/names.js';
import { unsafePathReason } from '../../naming/path-safety.js';
import type { RequestTarget, ServerContext } from '../context.js';
import { OBJECT_PREFIX } from '../objects/presign.js';
import { getObject } from './object-get-route.js';
import { type ObjectOutcome, putObject } from './object-put-route.js';
import { sendText } from './object-text.js';

const ALLOWED = 'GET, HEAD, PUT';

/** True when the path is an object route. */
export function isObjectPath(path: string): boolean {
  return path.startsWith(OBJECT_PREFIX);
}

/**
 * Handles a request to `/objects/<key>`. The object routes behind pre-signed URLs answer like an object store
 * in every wire mode: plain HTTP status, raw bytes, short plain-text errors.
 */
export async function handleObject(
  context: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: RequestTarget,
  outcome: ObjectOutcome,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (!context.signer) {
    sendText(
      res,
      404,
      'Not found: objects are served by the object store itself, at the URLs /download and /upload give.',
    );
    return;
  }
  if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') {
    sendText(res, 405, `Method ${method} is not allowed on objects; use ${ALLOWED}.`, { Allow: ALLOWED });
    return;
  }
  if (context.faults.intercept(res, target.rawQuery, target.path)) return;
  const key = target.path.slice(OBJECT_PREFIX.length);
  const unsafe = unsafePathReason(key);
  if (unsafe) {
    sendText(res, 400, `Invalid object key: ${unsafe}.`);
    return;
  }
  const problem = context.signer.problem(method, key, target.query);
  if (problem) {
    context.faults.sendError(res, 403, problem.message, {}, { expired: problem.expired });
    return;
  }
  try {
    parsePath(key);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    sendText(res, 400, `Invalid object key: ${error.problems.join(' ')}`);
    return;
  }
  if (method === 'PUT') await putObject(context, req, res, key, outcome);
  else await getObject(context, req, res, key, method === 'HEAD', outcome);
}
