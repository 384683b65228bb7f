/**
 * The names a download's part files take beside their destination: each process writes `<name>.part.<pid>`, with
 * a record of what it holds in `<name>.part.<pid>.json`. A run resumes a part by its name, so these names stay
 * as they are: a part an earlier version left is found and resumed.
 */
import { basename } from 'node:path';

/** The part process `pid` writes for `destination`. */
export function partPath(destination: string, pid: number): string {
  return `${destination}.part.${pid}`;
}

/** The record kept beside a part. */
export function recordPath(partPath: string): string {
  return `${partPath}.json`;
}

/** A part file or its record (`<name>.part.<pid>[.json]`), by its name in the folder. */
const PART_NAME = /\.part\.\d+(\.json)?$/;

/** True when `name` (a name in a folder, not a path) is a part file or a part's record. */
export function isPartName(name: string): boolean {
  return PART_NAME.test(name);
}

/** The pid of the process that writes the part `name` of `destination`; undefined when `name` is no such part. */
export function partPidOf(destination: string, name: string): number | undefined {
  const prefix = `${basename(destination)}.part.`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}

/** A part file and the record kept beside it. */
export interface PartPaths {
  /** The process that writes it. */
  pid: number;
  part: string;
  record: string;
}

/**
 * The part files of one destination, as every run names them: the download engine asks here for the paths of
 * its own part and of the parts other runs write or left, and never spells a part's name itself.
 */
export class PartFiles {
  constructor(readonly destination: string) {}

  /** This process's part. */
  get ours(): PartPaths {
    return this.of(process.pid);
  }

  /** The part process `pid` writes. */
  of(pid: number): PartPaths {
    const part = partPath(this.destination, pid);
    return { pid, part, record: recordPath(part) };
  }

  /** The parts among `names`, a listing of the destination's folder (records and other files left out). */
  among(names: Iterable<string>): PartPaths[] {
    const found: PartPaths[] = [];
    for (const name of names) {
      const pid = partPidOf(this.destination, name);
      if (pid !== undefined) found.push(this.of(pid));
    }
    return found;
  }
}
