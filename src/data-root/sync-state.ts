/**
 * The state of one sync: what it holds and how far it has read the archive, one file per service URL and filter
 * set under `<data root>/.mission-data/`, so syncs of different selections never share one. Written whole at the
 * end of a run (temporary file + rename), so a reader sees the old state or the new one, never half of one.
 */
import { lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cryptoModule } from '../core/on-first-use.js';
import { replaceFile } from '../core/replace-file.js';
import * as z from '../core/zod.js';
import { FILTER_NAMES, type QueryFilters } from '../naming/query-vocabulary.js';
import { writeNewFile } from './safe-writes.js';
import { STATE_NAMES, stateFolder } from './state-folder.js';

/** The `format` every state file names, so a file of something else is told apart from a damaged one. */
export const STATE_FORMAT = 'mission-data-sync/1';

/**
 * The state's long parts (an entry per held file) are checked by a loop, not by a schema of their elements: the
 * state is this tool's own file, and at 100,000 held files zod's parse of each element, and its copy of the whole,
 * was a third of every run's reading of the state (with the garbage it left, more).
 */
const heldFiles = z.custom<Record<string, string | null>>((value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const date of Object.values(value)) if (date !== null && typeof date !== 'string') return false;
  return true;
});
const storagePaths = z.custom<string[]>(
  (value) => Array.isArray(value) && value.every((path) => typeof path === 'string'),
);

const stateSchema = z.strictObject({
  format: z.literal(STATE_FORMAT),
  url: z.string(),
  filters: z.record(z.string(), z.string()),
  allVersions: z.boolean(),
  /** The latest `ingestion_date` (`YYYY-MM-DD HH:MM:SS`) of the files it covers; null before one is known. */
  cursor: z.nullable(z.string()),
  /** False once the service showed it cannot answer by ingestion date: every run then compares the whole selection. */
  incremental: z.boolean(),
  /** Files this sync holds verified, each with its ingestion date (null when the service gave none). */
  held: heldFiles,
  /** Files that failed: asked for again on the next run, whatever the cursor says. */
  failed: storagePaths,
  /**
   * Held versions known to be superseded by a newer one held: each is reported in the run that finds it, and not
   * again. Absent from the states written before it was kept, which load with none known.
   */
  superseded: z._default(storagePaths, () => []),
  updatedAt: z.string(),
});

/** The state of one sync (see the schema above). */
export type SyncState = z.infer<typeof stateSchema>;

/** What identifies a sync: the service it follows and the selection it keeps. */
export interface SyncIdentity {
  url: string;
  filters: QueryFilters;
  allVersions: boolean;
}

/** The filters as a state records and compares them: only those given, in the table's order. */
export function normalFilters(filters: QueryFilters): Record<string, string> {
  const normal: Record<string, string> = {};
  for (const name of FILTER_NAMES) {
    const value = filters[name];
    if (typeof value === 'string' && value !== '') normal[name] = value;
  }
  return normal;
}

/** The service URL without what does not change the service: a trailing slash, the case of the host. */
export function normalUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url.replace(/\/+$/, '');
  }
}

/** The name every file of one sync shares: `sync-` and a hash of the normalized URL, filters and version choice. */
export function syncId(identity: SyncIdentity): string {
  const text = JSON.stringify([
    normalUrl(identity.url),
    normalFilters(identity.filters),
    identity.allVersions,
  ]);
  return `${STATE_NAMES.syncPrefix}${cryptoModule().createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** A fresh state: nothing held, no cursor. */
export function emptyState(identity: SyncIdentity): SyncState {
  return {
    format: STATE_FORMAT,
    url: normalUrl(identity.url),
    filters: normalFilters(identity.filters),
    allVersions: identity.allVersions,
    cursor: null,
    incremental: true,
    held: {},
    failed: [],
    superseded: [],
    updatedAt: new Date(0).toISOString(),
  };
}

/** What reading a state gave: the state, or a fresh one and why the file there could not serve. */
export interface LoadedState {
  state: SyncState;
  /** True when no usable state was there: the run is a first run. */
  first: boolean;
  /** Set when a file was there but damaged or of another sync: one line for the user. */
  problem?: string | undefined;
}

/** Reads the state of `identity` under `root`; a damaged or foreign file is reported and treated as none. */
export async function readState(root: string, identity: SyncIdentity): Promise<LoadedState> {
  const file = join(stateFolder(root), `${syncId(identity)}.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { state: emptyState(identity), first: true };
  }
  return parseState(text, identity, file);
}

/** Parses a state file's text (see `readState`); `file` names it in the problem. */
export function parseState(text: string, identity: SyncIdentity, file: string): LoadedState {
  const fresh = { state: emptyState(identity), first: true };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ...fresh, problem: `The sync state ${file} is damaged (not JSON); starting as a first run.` };
  }
  const parsed = stateSchema.safeParse(data);
  if (!parsed.success) {
    const format = (data as { format?: unknown } | null)?.format;
    const what =
      typeof format === 'string' && format !== STATE_FORMAT
        ? `is of another format (${JSON.stringify(format).slice(0, 40)})`
        : 'is damaged (not a sync state)';
    return { ...fresh, problem: `The sync state ${file} ${what}; starting as a first run.` };
  }
  const expected = emptyState(identity);
  const state = parsed.data;
  if (
    state.url !== expected.url ||
    state.allVersions !== expected.allVersions ||
    JSON.stringify(state.filters) !== JSON.stringify(expected.filters)
  ) {
    return { ...fresh, problem: `The sync state ${file} belongs to another sync; starting as a first run.` };
  }
  shareDates(state.held);
  return { state, first: false };
}

/**
 * Makes the held files of one ingestion date share one string for it: the parse makes a string a file, and a
 * state of 100,000 files has a few hundred dates.
 */
function shareDates(held: Record<string, string | null>): void {
  const dates = new Map<string, string>();
  for (const path of Object.keys(held)) {
    const date = held[path];
    if (typeof date !== 'string') continue;
    const shared = dates.get(date);
    if (shared === undefined) dates.set(date, date);
    else held[path] = shared;
  }
}

/** Writes the state of `identity` under `root` at once: a temporary file, then a rename over the old one. */
export async function writeState(root: string, identity: SyncIdentity, state: SyncState): Promise<void> {
  const folder = stateFolder(root);
  await mkdir(folder, { recursive: true });
  const stats = await lstat(folder);
  // A state folder that is a link could send the write anywhere: the verified record refuses it too.
  if (!stats.isDirectory()) throw new Error(`${folder} is not a folder`);
  const file = join(folder, `${syncId(identity)}.json`);
  const temporary = `${file}.${process.pid}.tmp`;
  await rm(temporary, { force: true });
  await writeNewFile(temporary, stateText({ ...state, updatedAt: new Date().toISOString() }), 0o644);
  await replaceFile(temporary, file);
}

/** Held files written in one piece of a state's text. */
const HELD_PER_PIECE = 4096;
/** The held files as the state's text has them, empty. */
const NO_HELD = '"held":{}';

/**
 * The text of `state` (`JSON.stringify` of it and a newline) in pieces: the held files a few thousand at a time,
 * so that a state of 100,000 files is never one string of 10 MB (and its bytes another 10 MB) in memory. The
 * first `"held":{}` of the text without its files is the state's own: a string's quotes are escaped, and no
 * other field is an object with that key.
 */
export function* stateText(state: SyncState): Generator<string, void, undefined> {
  const rest = `${JSON.stringify({ ...state, held: {} })}\n`;
  const at = rest.indexOf(NO_HELD) + NO_HELD.length - 1;
  yield rest.slice(0, at);
  let piece: string[] = [];
  let first = true;
  for (const path of Object.keys(state.held)) {
    const date = state.held[path];
    // As JSON.stringify leaves out a field that is undefined.
    if (date === undefined) continue;
    piece.push(`${JSON.stringify(path)}:${JSON.stringify(date)}`);
    if (piece.length < HELD_PER_PIECE) continue;
    yield `${first ? '' : ','}${piece.join(',')}`;
    first = false;
    piece = [];
  }
  if (piece.length > 0) yield `${first ? '' : ','}${piece.join(',')}`;
  yield rest.slice(at);
}
