/** What `upload` will send and where each file is found: names checked, files located, folders compared. */
import { type Stats, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { runPool } from '../core/batch.js';
import { LocalFileError, ValidationError } from '../core/errors.js';
import { endsWithSeparator, LOCAL_PATHS, lastSegment, type PathRules } from '../core/platform-paths.js';
import { LOCAL_LAYOUT, misplacedFile, resolveLocalPath } from '../naming/layout.js';
import { dateOrderProblem, formatName, type MissionFile, parseName } from '../naming/names.js';
import { formatTodayVersion, parseVersion } from '../naming/versions.js';

/** A file to upload: the path as given, and what its name says. */
export interface PlannedUpload {
  /** The path as given. */
  argument: string;
  file: MissionFile;
}

/** A file as it was measured before sending: what the store must end up holding, or nothing. */
export interface MeasuredFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * Checks every name (a `ValidationError` lists each bad file's problems, a name whose end date is before its
 * start date among them) and drops a storage key given twice. A name is what follows the last separator of
 * `rules` (`\` too on Windows; elsewhere a `\` is part of the name, which the naming rules refuse).
 */
export function planUploads(paths: readonly string[], rules: PathRules = LOCAL_PATHS): PlannedUpload[] {
  const problems: string[] = [];
  const hints = new Set<string>();
  const planned = new Map<string, PlannedUpload>();
  for (const argument of paths) {
    // A folder is not a file whose name breaks the rules: said as such (uploads take files, one by one).
    if (endsWithSeparator(argument, rules) || statSync(argument, { throwIfNoEntry: false })?.isDirectory()) {
      problems.push(`${argument} is a folder: give the files in it (for example ${join(argument, '*')}).`);
      continue;
    }
    // The service keys a file by its name alone, so the name is what must follow the rules.
    const name = lastSegment(argument, rules);
    let file: MissionFile;
    try {
      file = parseName(name);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const problem of error.problems) problems.push(`${argument}: ${problem}`);
      // The client's suggestions (did you mean mag?) ride along as the hint.
      if (error.hint) hints.add(error.hint);
      continue;
    }
    const refused = dateOrderProblem(file) ?? minorOnlyScienceProblem(file);
    if (refused) {
      problems.push(`${argument}: ${refused}`);
      continue;
    }
    if (!planned.has(file.path)) planned.set(file.path, { argument, file });
  }
  if (problems.length > 0) {
    throw new ValidationError(problems, hints.size > 0 ? { hint: [...hints].join(' ') } : {});
  }
  return [...planned.values()];
}

/**
 * Why a science name of today's archive cannot be uploaded: its version is the legacy minor-only `vNNN`, which
 * the archive no longer takes for science (today's client refuses it before any request, and so does this one).
 * Undefined for every other name: quicklooks, dependency files and the `vNNN` of ancillary files and release
 * manifests are uploaded as they are.
 */
export function minorOnlyScienceProblem(file: MissionFile): string | undefined {
  if (file.kind !== 'science' || file.generation !== 'today') return undefined;
  const version = parseVersion(file.version);
  if (version?.form !== 'minor-only') return undefined;
  const renamed = formatName({ ...file, version: formatTodayVersion(1, version.minor) });
  return (
    `the version ${file.version} is minor-only (vNNN): the archive takes today's science files only with a ` +
    `major.minor version (vNNN.NNNN). Rename the file with a major version, e.g. ${renamed}, and upload that.`
  );
}

/**
 * What `/upload/<key>` is asked with: the bare file name for a name of today's archive (its service rebuilds
 * the storage path from the name, as today's client sends it), the storage path for a name of the
 * specification's (as the specification's service expects).
 */
export function uploadKey(file: MissionFile): string {
  return file.generation === 'today' ? file.name : file.path;
}

/**
 * Refuses the batch when a file is found in a folder that disagrees with its name (an `l1a` name below an `l1b`
 * folder, an April date below month `05`): the name alone decides where the service stores it, so such a file
 * is most likely the wrong file, or misnamed. A `ValidationError` (code `E_WRONG_FOLDER`) gives each file's
 * expected path. Files not found are left to the upload, which reports them one by one.
 */
export async function refuseMisplaced(
  planned: readonly PlannedUpload[],
  dataDir: string,
  cwd: string,
): Promise<void> {
  const problems: string[] = new Array(planned.length);
  await runPool(planned.length, 8, async (index) => {
    const plan = planned[index] as PlannedUpload;
    try {
      await locate(plan, dataDir, cwd, true);
    } catch (error) {
      if (error instanceof ValidationError) problems[index] = error.message;
    }
  });
  const found = problems.filter((problem) => problem !== undefined);
  if (found.length > 0) {
    throw new ValidationError(found, {
      code: 'E_WRONG_FOLDER',
      hint: `Move each file to the path shown (the layout is ${LOCAL_LAYOUT}), or rename it; or upload it by its name alone, wherever it lies.`,
    });
  }
}

/**
 * Where a path given to `upload` may be, in the order they are tried: inside the data root, in the working
 * directory, and as given when absolute. A bare file name is also looked for at its place in the local layout,
 * where `download` puts files and where products are expected to be.
 */
export function uploadCandidates(
  argument: string,
  dataDir: string,
  cwd: string,
  file?: MissionFile,
): string[] {
  const places = isAbsolute(argument)
    ? [resolve(argument)]
    : [join(dataDir, argument), resolve(cwd, argument)];
  if (file && lastSegment(argument) === argument) places.push(resolveLocalPath(dataDir, file));
  return [...new Set(places)];
}

/** What a path found on disk is, when it is neither a regular file nor a folder. */
function specialKind(info: Stats): string {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'neither a file nor a folder';
}

/** The failure of an upload whose path is a FIFO, a socket or a device: nothing of it is read or sent. */
function notRegularFile(path: string, info: Stats): LocalFileError {
  return new LocalFileError(
    `${path} is not a regular file but ${specialKind(info)}: nothing of it was read or sent.`,
    { hint: 'Upload takes regular files: write the data to a file first, then upload that file.' },
  );
}

/**
 * Finds and measures the file of `plan`: the first of its candidate places that holds something other than a
 * folder. A FIFO, a socket or a device there is a `LocalFileError` (`E_LOCAL_FILE`: not a regular file), as a path
 * found nowhere is one (`E_FILE_NOT_FOUND`). With `checkFolder`, a file in a folder that disagrees with its name is a
 * `ValidationError` (code `E_WRONG_FOLDER`) naming the path it belongs at.
 */
export async function locate(
  plan: PlannedUpload,
  dataDir: string,
  cwd: string,
  checkFolder: boolean,
): Promise<MeasuredFile> {
  const tried = uploadCandidates(plan.argument, dataDir, cwd, plan.file);
  for (const path of tried) {
    let info: Stats;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw new LocalFileError(`Cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (info.isDirectory()) continue;
    // Only a regular file has bytes to measure and send; a FIFO, a socket or a device is never opened (reading a
    // FIFO would wait for a writer).
    if (!info.isFile()) throw notRegularFile(path, info);
    const misplaced = checkFolder ? misplacedFile(dataDir, path, plan.file) : undefined;
    if (misplaced) throw new ValidationError([misplaced], { code: 'E_WRONG_FOLDER' });
    return { path, size: info.size, mtimeMs: info.mtimeMs };
  }
  throw new LocalFileError(`File not found: ${plan.argument} (looked for ${tried.join(', ')}).`, {
    code: 'E_FILE_NOT_FOUND',
    hint:
      `Files to upload are expected inside the data root in the layout ${LOCAL_LAYOUT}, ` +
      `e.g. ${join(dataDir, ...plan.file.path.split('/'))}; run from the folder that contains the data root ` +
      'and give the path inside it, or give a path relative to the working directory, or an absolute path.',
  });
}
