import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, TransferReporter } from '../../src/commands/progress.js';
import { LocalFileError } from '../../src/errors.js';

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  return {
    chunks,
    text: () => chunks.join(''),
    write: (text: string) => chunks.push(text),
    isTTY,
    columns: 60,
  };
}

const WORDS = {
  active: 'Downloading',
  statuses: { downloaded: 'downloaded', skipped: 'skipped', failed: 'failed' },
};

/** A clock that moves 1 s per reading (the reporter reads it at start, on each redraw and at the end). */
function clock() {
  let now = 0;
  return () => {
    now += 1000;
    return now;
  };
}

describe('TransferReporter', () => {
  it('without a terminal prints one line per file, a summary, and the failures with reasons and hints', () => {
    const out = stream(false);
    const reporter = new TransferReporter(out, 3, WORDS, { failures: ['failed'], now: clock() });
    reporter.progress('a', 10);
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: 2048 });
    reporter.settled({ label: 'imap/b', status: 'skipped', bytes: 0, note: 'exists' });
    reporter.settled({
      label: 'imap/c',
      status: 'failed',
      bytes: 0,
      error: new LocalFileError('Cannot write x: ENOSPC', { hint: 'Free some disk space.' }),
    });
    reporter.finish();
    expect(out.text()).toBe(
      [
        'downloaded imap/a (2.0 KiB)',
        'skipped imap/b (exists)',
        'failed imap/c: Cannot write x: ENOSPC',
        '1 downloaded, 1 skipped, 1 failed; 2.0 KiB in 1.0 s (2.0 KiB/s).',
        '1 file failed:',
        '  imap/c: Cannot write x: ENOSPC',
        'Hint: Free some disk space.',
        '',
      ].join('\n'),
    );
  });

  it('when quiet prints only the failures', () => {
    const out = stream(true);
    const reporter = new TransferReporter(out, 2, WORDS, { quiet: true, failures: ['failed'], now: clock() });
    reporter.progress('imap/a', 100);
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: 100 });
    reporter.settled({ label: 'imap/b', status: 'failed', bytes: 0, error: new Error('boom') });
    reporter.finish();
    expect(out.text()).toBe('1 file failed:\n  imap/b: boom\n');
  });

  it('on a terminal refreshes one line with files, bytes and rate, and clears it before the summary', () => {
    const out = stream(true);
    const reporter = new TransferReporter(out, 1, WORDS, { failures: ['failed'], now: clock() });
    reporter.setTotal(2);
    reporter.progress('imap/a', 1024 * 1024);
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: 1024 * 1024 });
    reporter.settled({ label: 'imap/b', status: 'downloaded', bytes: 1024 * 1024 });
    reporter.finish();
    const text = out.text();
    expect(text).not.toContain('\ndownloaded imap/a');
    expect(text).toContain('\r\u001b[2KDownloading 0/2 files  1.0 MiB');
    expect(text).toContain('\r\u001b[2KDownloading 2/2 files  2.0 MiB');
    expect(
      text.endsWith('\r\u001b[2K2 downloaded, 0 skipped, 0 failed; 2.0 MiB in 4.0 s (512.0 KiB/s).\n'),
    ).toBe(true);
    // The refreshing line never outgrows the terminal.
    const refreshes = text.split('\r\u001b[2K').filter((line) => line.startsWith('Downloading'));
    expect(refreshes).toHaveLength(3);
    for (const line of refreshes) expect(line.length).toBeLessThan(60);
  });
});

describe('formatting', () => {
  it('formats sizes and durations', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(75_000)).toBe('1 min 15 s');
  });
});
