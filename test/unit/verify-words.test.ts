/** What `verify` and `status` say of themselves: their help, and verify's summary, within 80 columns. */
import { describe, expect, it } from 'vitest';
import { verifySummary } from '../../src/cli/commands/verify.js';
import type { CommandIO } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';

function helpOf(name: string): string {
  const io = { stdout: { write: () => true }, stderr: { write: () => true } } as unknown as CommandIO;
  const command = buildProgram(io, () => {}).commands.find((candidate) => candidate.name() === name);
  if (!command) throw new Error(`no command ${name}`);
  return command.helpInformation();
}

const report = (
  counts: Partial<Record<'ok' | 'corrupt' | 'unverifiable' | 'unreadable' | 'extra', number>>,
  more = {},
) => ({
  entries: [],
  counts: { ok: 0, corrupt: 0, unverifiable: 0, unreadable: 0, extra: 0, ...counts },
  heldFiles: 0,
  notDue: 0,
  bytes: 123_456_789,
  repaired: 0,
  ...more,
});

describe('verify --help', () => {
  const help = helpOf('verify');

  it('says what --repair does in a whole sentence, and the default of --threads', () => {
    expect(help.replace(/\s+/g, ' ')).toContain('its old bytes are replaced only once the new copy verifies');
    expect(help.replace(/\s+/g, ' ')).toMatch(/--threads <n> .*\(default: 2, or 1 on a single core\)/);
  });

  it('lists no filter the command refuses (a name carries no ingestion day)', () => {
    expect(help).not.toContain('--ingestion-start-date');
    expect(help).not.toContain('--ingestion-end-date');
    expect(helpOf('status')).not.toContain('--ingestion-start-date');
  });
});

describe("verify's summary", () => {
  it('shows ok and corrupt always, the other counts only when there are some', () => {
    expect(verifySummary(report({ ok: 3 }), 0.1)).toBe('3 ok, 0 corrupt (117.7 MiB hashed in 0.1 s).\n');
    expect(verifySummary(report({ ok: 3, corrupt: 2, extra: 4 }), 1)).toBe(
      '3 ok, 2 corrupt, 4 extra (117.7 MiB hashed in 1.0 s).\n',
    );
  });

  it('fits 80 columns, what was repaired or left out on a line of its own', () => {
    const text = verifySummary(
      report(
        { ok: 123_456, corrupt: 2, unverifiable: 30, unreadable: 1, extra: 4 },
        { repaired: 2, notDue: 500 },
      ),
      12.3,
    );
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(text).toContain('\n2 repaired. 500 verified since the date given, left out.\n');
  });
});
