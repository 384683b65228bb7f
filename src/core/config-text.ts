/**
 * The configuration file's text, read before anything that checks it is loaded: most runs have no configuration
 * file, and they need not build its checks (zod schemas, about 5 ms of every command) to learn that.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from './errors.js';

/** The text of the configuration file at `file`; undefined when there is none. */
export async function readConfigText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`Cannot read the configuration file ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
