import { describe, expect, it } from 'vitest';
import { formatBar, formatBytes, formatDuration, formatPair, formatTimeLeft } from '../../src/cli/format.js';
import { TransferReporter } from '../../src/cli/progress.js';
import { AbortedError, LocalFileError, MissionDataError, NOT_ATTEMPTED } from '../../src/core/errors.js';
import { screenText } from '../helpers/screen.js';

function stream(isTTY: boolean, columns = 60) {
  const chunks: string[] = [];
  return {
    chunks,
    text: () => chunks.join(''),
    write: (text: string) => chunks.push(text),
    isTTY,
    columns,
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

const MiB = 1024 * 1024;

describe('TransferReporter off a terminal', () => {
  it('prints one line per file, each failure once, a summary and hints', () => {
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
    expect(out.text()).toBe('failed imap/b: boom\n');
  });

  it('sums up the files a stopped batch did not attempt in one line, with the reason', () => {
    const out = stream(false);
    const reporter = new TransferReporter(out, 4, WORDS, { failures: ['failed'], now: clock() });
    reporter.settled({ label: 'imap/a', status: 'failed', bytes: 0, error: new Error('403 Forbidden') });
    for (const label of ['imap/b', 'imap/c', 'imap/d']) {
      const error = new MissionDataError(
        'not attempted: the service refused the API key (403)',
        NOT_ATTEMPTED,
        1,
      );
      reporter.settled({ label, status: 'failed', bytes: 0, error });
    }
    reporter.finish();
    expect(out.text()).toBe(
      [
        'failed imap/a: 403 Forbidden',
        '1 failed, 3 not started; 0 B in 1.0 s.',
        'Stopped: 3 files not started, as the service refused the API key (403).',
        '',
      ].join('\n'),
    );
  });

  it('draws nothing that refreshes when told not to animate (CI, TERM=dumb), even on a TTY', () => {
    const out = stream(true);
    const reporter = new TransferReporter(out, 1, WORDS, {
      failures: ['failed'],
      animate: false,
      now: clock(),
    });
    reporter.progress('imap/a', 100, 200);
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: 200 });
    reporter.finish();
    expect(out.text()).not.toContain('\r');
    expect(out.text()).toBe('downloaded imap/a (200 B)\n1 downloaded; 200 B in 1.0 s (200 B/s).\n');
  });
});

describe('TransferReporter on a terminal', () => {
  it('shows the known total, a bar, percentage, rate and time left for one large file', () => {
    const out = stream(true, 100);
    const reporter = new TransferReporter(out, 1, WORDS, { failures: ['failed'], now: clock() });
    reporter.progress('imap/big', 100 * MiB, 500 * MiB);
    reporter.progress('imap/big', 200 * MiB, 500 * MiB);
    const screen = screenText(out.text(), 100);
    expect(screen).toHaveLength(1);
    expect(screen[0]).toMatch(
      /^Downloading 0\/1 {2}200\.0\/500\.0 MiB {2}40% \[#{12}\.{18}\] {2}100\.0 MiB\/s {2}3 s left$/,
    );
    expect((screen[0] ?? '').length).toBeLessThan(100);
  });

  it('shows an upload MD5 pass as hashing, with its own progress', () => {
    const out = stream(true, 100);
    const reporter = new TransferReporter(
      out,
      1,
      { active: 'Uploading', statuses: { uploaded: 'uploaded' } },
      { failures: ['failed'], now: clock() },
    );
    reporter.hashing('imap/big', 0, 500 * MiB);
    reporter.hashing('imap/big', 250 * MiB, 500 * MiB);
    const [line] = screenText(out.text(), 100);
    expect(line).toMatch(
      /^Hashing \(MD5\) 0\/1 {2}250\.0\/500\.0 MiB {2}50% \[#+\.+\] {2}250\.0 MiB\/s {2}1 s left$/,
    );
  });

  it('keeps a line for each skipped or failed file above the progress line, downloaded ones only counted', () => {
    const out = stream(true, 80);
    const reporter = new TransferReporter(out, 3, WORDS, {
      failures: ['failed'],
      listed: ['skipped'],
      now: clock(),
    });
    reporter.settled({ label: 'imap/mag/a.cdf', status: 'downloaded', bytes: MiB });
    reporter.settled({ label: 'imap/mag/b.cdf', status: 'skipped', bytes: 0 });
    reporter.progress('imap/mag/c.cdf', 10);
    // On a terminal a kept line names the file (its path follows from the name).
    expect(screenText(out.text(), 80)).toEqual([
      'skipped b.cdf',
      expect.stringMatching(/^Downloading 2\/3 {2}1\.0 MiB {2}66% \[#+\.+\]/),
    ]);
    reporter.settled({ label: 'imap/mag/c.cdf', status: 'failed', bytes: 0, error: new Error('boom') });
    reporter.finish();
    const screen = screenText(out.text(), 80);
    expect(screen).toEqual([
      'skipped b.cdf',
      'failed c.cdf: boom',
      expect.stringMatching(/^1 downloaded, 1 skipped, 1 failed; 1\.0 MiB in /),
    ]);
    // The failure is printed once: no closing list repeats it.
    expect(out.text().split('c.cdf').length - 1).toBe(1);
  });

  it('with verbose keeps a line for every file', () => {
    const out = stream(true, 80);
    const reporter = new TransferReporter(out, 1, WORDS, {
      failures: ['failed'],
      verbose: true,
      now: clock(),
    });
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: 2048 });
    reporter.finish();
    expect(screenText(out.text(), 80)[0]).toBe('downloaded a (2.0 KiB)');
  });

  it('never draws a line wider than the terminal', () => {
    for (const columns of [20, 40, 60, 80]) {
      const out = stream(true, columns);
      const reporter = new TransferReporter(out, 12, WORDS, { failures: ['failed'], now: clock() });
      reporter.progress('imap/big', 123 * MiB, 4000 * MiB);
      for (const line of out.text().split('\r\u001b[2K')) expect(line.length).toBeLessThan(columns);
      expect(screenText(out.text(), columns)).toHaveLength(1);
    }
  });
});

describe('issue 19: quiet no-ops, honest counts, stalls and waits', () => {
  const DOWNLOAD_WORDS = {
    active: 'Downloading',
    statuses: {
      downloaded: 'downloaded',
      replaced: 'replaced',
      skipped: 'skipped (verified)',
      failed: 'failed',
    },
  };

  it.each([true, false])(
    'a re-run prints no line per unchanged file (terminal: %s), only the counts',
    (tty) => {
      const out = stream(tty, 80);
      const reporter = new TransferReporter(out, 2000, DOWNLOAD_WORDS, {
        failures: ['failed'],
        unchanged: ['skipped'],
        animate: tty,
        ticking: false,
        now: clock(),
      });
      for (let index = 0; index < 2000; index += 1) {
        reporter.settled({ label: `imap/swe/f${index}.cdf`, status: 'skipped', bytes: 0 });
      }
      reporter.finish();
      expect(screenText(out.text(), 80)).toEqual([
        expect.stringMatching(/^2,000 skipped \(verified\); 0 B in /),
      ]);
    },
  );

  it('with verbose, unchanged files get their line', () => {
    const out = stream(false);
    const reporter = new TransferReporter(out, 1, DOWNLOAD_WORDS, {
      failures: ['failed'],
      unchanged: ['skipped'],
      verbose: true,
      ticking: false,
      now: clock(),
    });
    reporter.settled({ label: 'imap/a', status: 'skipped', bytes: 0 });
    reporter.finish();
    expect(out.text()).toContain('skipped (verified) imap/a\n');
  });

  it('on Ctrl-C counts done, failed and not started apart, with the bytes kept for a resume', () => {
    const out = stream(false);
    const reporter = new TransferReporter(out, 6, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: clock(),
    });
    reporter.settled({ label: 'imap/a', status: 'downloaded', bytes: MiB });
    reporter.settled({
      label: 'imap/b',
      status: 'failed',
      bytes: 3 * MiB,
      kept: 3 * MiB,
      error: new AbortedError('Cancelled.'),
    });
    for (const label of ['imap/c', 'imap/d', 'imap/e', 'imap/f']) {
      const error = new MissionDataError('not attempted: the batch was cancelled', NOT_ATTEMPTED, 1, {
        cause: new AbortedError(),
      });
      reporter.settled({ label, status: 'failed', bytes: 0, error });
    }
    reporter.finish('Interrupted; run the same command again to resume.');
    const lines = out.text().split('\n');
    // No line per file not started, and none of them counted as failed.
    expect(out.text()).not.toContain('imap/c');
    expect(lines).toContain('3.0 MiB of unfinished files kept; the next run resumes them.');
    expect(lines.find((line) => line.includes('not started'))).toMatch(
      /^1 downloaded, 1 failed, 4 not started; 4\.0 MiB in /,
    );
    expect(lines).toContain('Interrupted; run the same command again to resume.');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('a full data root is told once, however many files were in flight', () => {
    const out = stream(false);
    const reporter = new TransferReporter(out, 3, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: clock(),
    });
    for (const label of ['imap/a', 'imap/b', 'imap/c']) {
      const error = new LocalFileError(`Cannot write ${label}: the disk is full (ENOSPC).`, {
        code: 'E_DATA_ROOT',
      });
      reporter.settled({ label, status: 'failed', bytes: 0, error });
    }
    reporter.finish();
    expect(out.text().match(/the disk is full/g)).toHaveLength(1);
    expect(out.text()).toContain('3 failed;');
  });

  it('turns the time left into "stalled N s" after a few seconds without a byte, and the rate decays', () => {
    let now = 0;
    const reporter = new TransferReporter(stream(true, 100), 1, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: () => now,
    });
    const line = () => reporter.status(now, 99);
    for (let second = 1; second <= 3; second += 1) {
      now = second * 1000;
      reporter.progress('imap/big', second * 10 * MiB, 500 * MiB);
    }
    expect(line()).toMatch(/10\.0 MiB\/s {2}\d+ s left$/);
    now = 7000;
    expect(line()).toMatch(/stalled 4 s$/);
    now = 12_000;
    expect(line()).not.toMatch(/MiB\/s/);
    expect(line()).toMatch(/stalled 9 s$/);
  });

  it('says "connecting…" before the first byte and names the process it waits for', () => {
    let now = 0;
    const reporter = new TransferReporter(stream(true, 120), 2, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: () => now,
    });
    now = 500;
    expect(reporter.status(now, 119)).toMatch(/connecting…$/);
    reporter.waiting('imap/a', 4242);
    expect(reporter.status(now, 119)).toMatch(/waiting for process 4242 that is downloading the same file$/);
  });

  it('keeps the process it waits for within 80 columns, the bar and byte counts going first', () => {
    let now = 0;
    const reporter = new TransferReporter(stream(true, 80), 12, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: () => now,
    });
    reporter.progress('imap/a', 0, 2 * 1024 ** 3);
    reporter.waiting('imap/a', 4194304);
    now = 500;
    expect(reporter.status(now, 79)).toBe(
      'Downloading 0/12  waiting for process 4194304 that is downloading the same file',
    );
    expect(reporter.status(now, 50)).toBe('Downloading 0/12  waiting for process 4194304');
  });

  it('off a terminal prints a progress line every 10 s', async () => {
    const { vi } = await import('vitest');
    vi.useFakeTimers();
    try {
      const out = stream(false);
      const reporter = new TransferReporter(out, 2, DOWNLOAD_WORDS, { failures: ['failed'] });
      reporter.progress('imap/a', 5 * MiB, 10 * MiB);
      vi.advanceTimersByTime(10_500);
      expect(out.text()).toMatch(/^Downloading 0\/2 {2}5\.0 MiB/);
      reporter.finish();
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps the bar one width while the numbers change', () => {
    const widths = new Set<number>();
    let now = 0;
    const reporter = new TransferReporter(stream(true, 100), 1, DOWNLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      now: () => now,
    });
    for (const done of [1, 9, 10, 99, 100, 450]) {
      now += 1000;
      reporter.progress('imap/big', done * MiB, 500 * MiB);
      widths.add(reporter.status(now, 99).match(/\[[#.]+\]/)?.[0].length ?? 0);
    }
    expect(widths.size).toBe(1);
  });
});

describe('formatting', () => {
  it('formats sizes, durations, time left and bars', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(75_000)).toBe('1 min 15 s');
    expect(formatTimeLeft(6100)).toBe('7 s left');
    expect(formatTimeLeft(125_000)).toBe('2 min 5 s left');
    expect(formatTimeLeft(3_780_000)).toBe('1 h 3 min left');
    expect(formatBar(0.5, 10)).toBe('[#####.....]');
    expect(formatBar(2, 4)).toBe('[####]');
    expect(formatPair(33 * 1024 * 1024, 500 * 1024 * 1024)).toBe('33.0/500.0 MiB');
    expect(formatPair(900 * 1024, 1024 ** 3)).toBe('900.0 KiB/1.0 GiB');
  });
});

describe('the time left of an upload that hashes before sending', () => {
  const UPLOAD_WORDS = { active: 'Uploading', statuses: { uploaded: 'uploaded' } };

  it('while hashing before any sending, shows the time left of the MD5 pass, as such', () => {
    let now = 0;
    const reporter = new TransferReporter(stream(true, 80), 1, UPLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      hashesFirst: true,
      now: () => now,
    });
    now = 1000;
    reporter.hashing('imap/a', 0, 100 * MiB);
    now = 1500;
    reporter.hashing('imap/a', 25 * MiB, 100 * MiB);
    // 75 MiB left at 50 MiB/s; the sending rate is not known yet.
    expect(reporter.status(now, 79)).toMatch(
      /^Hashing \(MD5\) 0\/1 {2}25\.0\/100\.0 MiB {2}25% .* 2 s left to hash$/,
    );
  });

  it('counts both passes, so it does not start over when the next pass or file begins', () => {
    let now = 0;
    const reporter = new TransferReporter(stream(true, 100), 2, UPLOAD_WORDS, {
      failures: ['failed'],
      ticking: false,
      hashesFirst: true,
      now: () => now,
    });
    const at = (ms: number, act: () => void) => {
      now = ms;
      act();
    };
    const left = () => /(\d+) s left$/.exec(reporter.status(now, 99))?.[1];
    // Two files of 100 MiB, one at a time: hashed at 100 MiB/s, sent at 50 MiB/s.
    at(1000, () => reporter.hashing('imap/a', 0, 100 * MiB));
    at(2000, () => reporter.hashing('imap/a', 100 * MiB, 100 * MiB));
    at(3000, () => reporter.progress('imap/a', 0, 100 * MiB));
    at(4000, () => reporter.progress('imap/a', 50 * MiB, 100 * MiB));
    at(5000, () => reporter.progress('imap/a', 100 * MiB, 100 * MiB));
    at(5000, () => reporter.settled({ label: 'imap/a', status: 'uploaded', bytes: 100 * MiB }));
    at(6000, () => reporter.hashing('imap/b', 0, 100 * MiB));
    at(6500, () => reporter.hashing('imap/b', 50 * MiB, 100 * MiB));
    // Left: 50 MiB to hash and 100 MiB to send, each at its own recent rate.
    const whileHashing = Number(left());
    // The MD5 pass alone would say 1 s; the sending still to come is counted too.
    expect(whileHashing).toBe(7);
    at(7000, () => reporter.hashing('imap/b', 100 * MiB, 100 * MiB));
    at(7500, () => reporter.progress('imap/b', 10 * MiB, 100 * MiB));
    // Sending the second file: what is left is less than before, not a fresh estimate of the sending alone.
    const whileSending = Number(left());
    expect(whileSending).toBeGreaterThan(0);
    expect(whileSending).toBeLessThanOrEqual(whileHashing);
  });
});
