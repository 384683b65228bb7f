/**
 * The README's table of settings is the table of `src/core/settings.ts` written out: a setting added, renamed or
 * given another default there fails this test until the README says the same (the expected table is printed).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS_BY_GROUP, type SettingSpec, shownDefault } from '../../src/core/settings.js';

const README = resolve(import.meta.dirname, '../../README.md');

const code = (text: string) => `\`${text}\``;

/** A setting's default as the README states it: in its unit, `none` when it has none. */
function readmeDefault(spec: SettingSpec): string {
  const value = shownDefault(spec);
  if (value === undefined) return 'none';
  return spec.unit ? `${code(value)} ${spec.unit}` : code(value);
}

/** The README's table, as the table of settings gives it. */
function expectedTable(): string {
  const rows = SETTINGS_BY_GROUP.map((spec) => {
    const flag = /--[\w-]+/.exec(spec.flag)?.[0] ?? spec.flag;
    const env = spec.env.map(code).join(', then ');
    return `| ${spec.title} | ${code(flag)} | ${env} | ${code(spec.key)} | ${readmeDefault(spec)} |`;
  });
  return ['| setting | flag | environment | config key | default |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

/** The table under the README's `## Configuration` heading. */
function readmeTable(): string {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('\n## Configuration\n'));
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('| setting |'));
  const end = lines.findIndex((line, index) => index > start && !line.startsWith('|'));
  return lines.slice(start, end).join('\n');
}

describe("the README's table of settings", () => {
  it('lists every setting of the table, with its flag, variables, config key and default', () => {
    expect(readmeTable()).toBe(expectedTable());
  });

  it('is read from the Configuration section and fails when a row differs', () => {
    const table = readmeTable();
    expect(table).toContain('`MISSION_DATA_TIMEOUT`');
    expect(table.replace('`30` seconds', '`31` seconds')).not.toBe(expectedTable());
  });
});
