/**
 * Which machine wrote a lock, a run's entry or a part's record: an id made once at random and kept in the
 * configuration folder, not the host name. macOS renames the host as it changes networks, and two laptops are
 * both `MacBook-Pro.local`: a name would take the machine's own lock for another's, or another's for its own.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultConfigFile } from './config.js';
import { cryptoModule } from './on-first-use.js';

/** The file in the configuration folder that holds the id. */
const HOST_ID_FILE = 'host-id';
/** What an id looks like (a UUID is one): anything else in the file is taken for damage and replaced. */
const ID_FORM = /^[A-Za-z0-9-]{16,64}$/;

let known: { folder: string; id: string } | undefined;

/**
 * The platform's configuration folder (where `config.json` lives by default). `MISSION_DATA_CONFIG` names a
 * file, perhaps shared or read-only, and says nothing of the machine: it is not followed here.
 */
export function configFolder(env: Record<string, string | undefined> = process.env): string {
  return dirname(defaultConfigFile({ ...env, MISSION_DATA_CONFIG: undefined }));
}

function readId(file: string): string | undefined {
  try {
    const id = readFileSync(file, 'utf8').trim();
    return ID_FORM.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Puts a new id in `file` unless another run put one there first (then that one is the id): the id is written
 * whole to a file of its own, then linked to its name, which fails when the name exists. Where the file system
 * has no links (FAT, exFAT), or the file holds no id, a rename puts it in place.
 */
function createId(file: string): string {
  const id = cryptoModule().randomUUID();
  const temporary = `${file}.${process.pid}.${id.slice(0, 8)}.tmp`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(temporary, `${id}\n`, { flag: 'wx', mode: 0o644 });
  try {
    try {
      linkSync(temporary, file);
      return id;
    } catch (error) {
      const existing = (error as NodeJS.ErrnoException).code === 'EEXIST' ? readId(file) : undefined;
      if (existing) return existing;
    }
    renameSync(temporary, file);
    return id;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * This machine's id, kept in `folder` (the configuration folder): made the first time, the same for every later
 * run. Where the folder cannot hold it, the host name stands in, as in versions before the id.
 */
export function hostId(folder: string = configFolder()): string {
  if (known?.folder === folder) return known.id;
  const file = join(folder, HOST_ID_FILE);
  let id: string;
  try {
    id = readId(file) ?? createId(file);
  } catch {
    id = hostname();
  }
  known = { folder, id };
  return id;
}

/**
 * True when `host`, as a lock, an entry or a record names its writer's machine, is this one: its id, or the host
 * name that versions before the id wrote (a record left by one of them on this machine is still its own).
 */
export function isThisHost(host: string, folder?: string): boolean {
  return host === hostId(folder) || host === hostname();
}
