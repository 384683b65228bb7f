/**
 * What `download` fetches of the files it is given one by one: their storage paths, and the archive's matches of
 * each glob, of the version `--version` selects (`latest`: the newest of each product and day, as the archive's
 * `latest` picks it for `query`).
 */
import type { ArchiveGlob, DownloadTargets, MissionDataClient } from '../../api.js';
import { UsageError } from '../../core/errors.js';
import { locateFile } from '../../naming/layout.js';
import { nameWarning } from '../../naming/names.js';
import type { QueryFilters } from '../../naming/query-vocabulary.js';
import type { CommandIO } from '../io.js';
import { filterFlag } from '../options.js';

/** The one query filter `download` takes beside paths: it selects among the matches of a glob or a folder. */
export const BESIDE_PATHS = 'version' satisfies keyof QueryFilters;

/**
 * Refuses a version beside files named one by one: a file's name carries its version, so there is nothing to
 * select among (a glob's or a folder's matches take it).
 */
export function refuseVersionOfNamedFiles(
  read: DownloadTargets,
  version: string | undefined,
  given: readonly string[],
): void {
  if (version === undefined || read.kind !== 'files' || read.paths.length === 0) return;
  const flag = filterFlag(BESIDE_PATHS);
  throw new UsageError(
    `${flag} selects among the matches of a glob or a folder; a file named one by one carries its version in its ` +
      `name (got ${JSON.stringify(read.paths[0])}${given.length > 1 ? ` among ${given.length} paths` : ''}).`,
    {
      hint: `Give a glob of the names (quoted: 'imap_mag_l1a_norm_202501*') with ${flag} ${version}, or name the version you want.`,
    },
  );
}

/**
 * The storage paths of files named one by one and of the globs' matches of `version` (every version without
 * it); none said on stderr.
 */
export async function namedTargets(
  client: MissionDataClient,
  read: Extract<DownloadTargets, { kind: 'files' }>,
  options: { quiet?: boolean | undefined; version?: string | undefined },
  io: CommandIO,
): Promise<string[]> {
  if (!options.quiet)
    for (const warning of nameWarnings(read.paths)) io.stderr.write(`Warning: ${warning}\n`);
  const targets = [...read.paths, ...(await globMatches(client, read.globs, options, io))];
  if (targets.length === 0 && !options.quiet) {
    const patterns = read.globs.map((glob) => JSON.stringify(glob.pattern)).join(', ');
    const of = options.version === undefined ? '' : ` in version ${options.version}`;
    io.stderr.write(`No file in the archive matches ${patterns}${of}; nothing to download.\n`);
  }
  return targets;
}

/**
 * What the naming rules warn about the files named (a science descriptor of digits only, read as the archive
 * reads it); a name they refuse is left to the download's own check, which says what is wrong with it.
 */
function nameWarnings(paths: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const path of paths) {
    let located: ReturnType<typeof locateFile>;
    try {
      located = locateFile(path);
    } catch {
      continue;
    }
    const warning = located.kind === 'unchecked' ? undefined : nameWarning(located);
    if (warning) warnings.push(warning);
  }
  return warnings;
}

/**
 * The storage paths the archive holds that match the globs: one query per glob, of its fixed parts and the
 * version asked for (the archive's `latest` keeps the newest version of each product and day), sorted by the
 * glob itself. A glob that matches nothing among others is said on stderr; the caller says it when none did.
 */
async function globMatches(
  client: MissionDataClient,
  globs: readonly ArchiveGlob[],
  options: { quiet?: boolean | undefined; version?: string | undefined },
  io: CommandIO,
): Promise<string[]> {
  const found: string[] = [];
  const version: QueryFilters = options.version === undefined ? {} : { version: options.version };
  for (const glob of globs) {
    if (glob.unlisted) throw new UsageError(`${JSON.stringify(glob.pattern)}: ${glob.unlisted}`);
    // A SPICE glob may match kernels of several types: the service lists them one type at a time.
    const matches: string[] = [];
    for (const filters of glob.queries.length > 0 ? glob.queries : [glob.filters]) {
      const records = await client.query({ ...filters, ...version });
      matches.push(...records.map((record) => record.file_path).filter((path) => glob.matches(path)));
    }
    if (matches.length === 0 && globs.length > 1 && !options.quiet) {
      io.stderr.write(`Warning: no file in the archive matches ${JSON.stringify(glob.pattern)}.\n`);
    }
    found.push(...matches);
  }
  return [...new Set(found)];
}
