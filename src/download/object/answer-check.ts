/**
 * Checking an object answer against what is on disk of the object (the part file and its state), and
 * forgetting what is on disk when it belongs to another version of the object: the stream (`receive.ts`)
 * asks it of each answer.
 */
import { ProtocolError } from '../../core/errors.js';
import type { ObjectResponse } from '../../http/objects.js';
import { header, numericHeader } from '../../http/objects.js';
import type { ObjectState } from '../part/object-state.js';
import type { PartFile } from '../part/part-file.js';

/** The object's last byte, when its size is known (a range from byte 0 needs one to be a range at all). */
export function lastByte(state: ObjectState): number | undefined {
  return state.total === undefined || state.total === 0 ? undefined : state.total - 1;
}

/** Forgets what is on disk of the object: the part is emptied, to be written from byte 0. */
export function emptyPart(state: ObjectState, part: PartFile): void {
  if (state.written > 0 || state.finished !== undefined) part.truncate();
  state.written = 0;
  state.finished = undefined;
}

/** Forgets the object itself too (it changed): its size and ETag are learnt again. */
export function restartState(state: ObjectState, part: PartFile): void {
  emptyPart(state, part);
  state.total = undefined;
  state.etag = undefined;
  state.expected = undefined;
}

/**
 * Checks an object answer against what is on disk and learns the object's size: `restart` when the body
 * starts at byte 0 (a 200, perhaps to a Range request), `stale` when a part an earlier run left belongs to
 * another version of the object, `continue` when the body carries on from the bytes on disk.
 */
export function acceptResponse(
  response: ObjectResponse,
  state: ObjectState,
  shown: () => string,
  resuming: boolean,
): 'restart' | 'stale' | 'continue' {
  const etag = header(response, 'etag');
  const length = numericHeader(response, 'content-length', shown);
  const changed = state.etag !== undefined && etag !== undefined && etag !== state.etag;
  if (etag !== undefined) state.etag = etag;
  if (response.status === 206 && changed && resuming) {
    // What an earlier run left belongs to another version (a store that ignores If-Match): start over.
    return 'stale';
  }
  if (response.status === 200) {
    if (length !== undefined) state.total = length;
    else if (changed) state.total = undefined;
    return 'restart';
  }
  // The URL as messages show it: only a refusal below needs it.
  const url = shown();
  if (response.status !== 206) {
    throw new ProtocolError(`GET ${url}: unexpected status ${response.status} for a file download.`);
  }
  const range = header(response, 'content-range');
  const match = range === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range.trim());
  if (!match) {
    throw new ProtocolError(
      `GET ${url}: a 206 answer without a readable Content-Range (${range ?? 'none'}).`,
    );
  }
  const first = Number(match[1]);
  const last = Number(match[2]);
  const size = match[3] === '*' ? undefined : Number(match[3]);
  if (first !== state.written || last < first || (size !== undefined && last >= size)) {
    throw new ProtocolError(
      `GET ${url}: asked for bytes from ${state.written} but the answer holds ${range}; refusing to splice it.`,
    );
  }
  if (length !== undefined && length !== last - first + 1) {
    throw new ProtocolError(`GET ${url}: Content-Length ${length} does not match Content-Range ${range}.`);
  }
  if (changed || (size !== undefined && state.total !== undefined && size !== state.total)) {
    throw new ProtocolError(`GET ${url}: the file changed on the server while it was being downloaded.`, {
      code: 'E_FILE_CHANGED',
      hint: 'Run the download again.',
    });
  }
  // A partial answer that does not reach the end would leave a hole: treat its end as the object's end only
  // when the server gave no size.
  state.total = size ?? last + 1;
  return 'continue';
}
