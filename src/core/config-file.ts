/**
 * The configuration file: what it may hold, read and checked (keys this version does not know set apart, not
 * refused), and written atomically for its owner only.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readConfigText } from './config-text.js';
import { ConfigError } from './errors.js';
import { replaceFile } from './replace-file.js';
import { HTTP_URL_PROBLEM, SETTINGS, type SettingKey, type SettingSpec } from './settings.js';
import * as z from './zod.js';

/** A value of the configuration file, checked as its setting says. */
function fileValue(spec: SettingSpec) {
  const problem = spec.problem;
  if (problem === 'http-url') return z.url({ protocol: /^https?$/, error: HTTP_URL_PROBLEM });
  return z.string().check(
    z.superRefine((value, context) => {
      const found = problem(value);
      if (found !== undefined) context.addIssue({ code: 'custom', message: found, input: value });
    }),
  );
}

/** What a configuration file may hold, each value as a string: the table's settings, by their keys. */
const configFileSchema = z.strictObject(
  Object.fromEntries(SETTINGS.map((spec) => [spec.key, z.optional(fileValue(spec))])),
);

/** The contents of a configuration file: a text value for each setting it holds. */
export type ConfigFile = { [Key in SettingKey]?: string | undefined };

/** Why `value` cannot be the setting `name` of a configuration file; undefined when it can. */
export function settingProblem(name: keyof ConfigFile, value: string): string | undefined {
  const result = configFileSchema.safeParse({ [name]: value });
  return result.success ? undefined : (result.error.issues[0]?.message ?? 'invalid');
}

/** The settings a configuration file may hold, in the order messages list them. */
const FILE_SETTINGS = Object.keys(configFileSchema.shape);

/** A configuration file as read: its settings, and the keys this version does not know (kept when it is rewritten). */
export interface ConfigDocument {
  settings: ConfigFile;
  /** Keys this version does not know, with their values: a newer version's settings, or typos. */
  unknown: Record<string, unknown>;
}

/** Reads and checks a configuration file's settings; a missing file is an empty configuration. */
export async function readConfigFile(file: string): Promise<ConfigFile> {
  return (await readConfigDocument(file)).settings;
}

/**
 * Reads and checks a configuration file. A key this version does not know is set apart, not refused: a file
 * shared with a newer version, or a typo, must not stop every command (the caller warns about it).
 */
export async function readConfigDocument(file: string): Promise<ConfigDocument> {
  const text = await readConfigText(file);
  return text === undefined ? { settings: {}, unknown: {} } : parseConfigDocument(file, text);
}

/** Checks the text of the configuration file at `file` (see `readConfigDocument`). */
export function parseConfigDocument(file: string, text: string): ConfigDocument {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`The configuration file ${file} is not valid JSON: ${(error as Error).message}`, {
      hint: `Fix the JSON in ${file}, or delete the file to start again.`,
      cause: error,
    });
  }
  const unknown: Record<string, unknown> = {};
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const known: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      if ((FILE_SETTINGS as string[]).includes(key)) known[key] = value;
      else unknown[key] = value;
    }
    data = known;
  }
  const result = configFileSchema.safeParse(data);
  if (!result.success) {
    const problems = result.error.issues.map((issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown setting${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
        : issue.path.length > 0
          ? `${issue.path.join('.')} ${issue.message}`
          : 'it must be a JSON object',
    );
    throw new ConfigError(`The configuration file ${file} is malformed: ${problems.join('; ')}.`, {
      hint: `Valid settings are ${FILE_SETTINGS.join(', ')}. Fix or delete ${file}.`,
    });
  }
  return { settings: result.data as ConfigFile, unknown };
}

/** The warning about the keys of a configuration file this version does not know. */
export function unknownSettingsWarning(file: string, unknown: Record<string, unknown>): string[] {
  const keys = Object.keys(unknown);
  if (keys.length === 0) return [];
  const which = keys.map((key) => JSON.stringify(key)).join(', ');
  return [
    `The configuration file ${file} has ${keys.length === 1 ? 'an unknown setting' : 'unknown settings'} ${which}, ignored. Settings are ${FILE_SETTINGS.join(', ')}.`,
  ];
}

/** Writes the configuration file atomically, readable by its owner only (it may hold an API key). */
export async function writeConfigFile(file: string, contents: ConfigFile): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 });
    await replaceFile(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new ConfigError(`Cannot write the configuration file ${file}: ${(error as Error).message}`, {
      cause: error,
      hint: (error as { hint?: string }).hint,
    });
  }
}
