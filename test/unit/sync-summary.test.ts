/** `sync`'s closing line: files never started (the run stopped) are counted apart from those that failed. */
import { describe, expect, it } from 'vitest';
import type { SyncFile } from '../../src/api.js';
import { syncSummary } from '../../src/cli/commands/sync.js';
import { LocalFileError, MissionDataError, NOT_ATTEMPTED } from '../../src/core/errors.js';

const file = (status: SyncFile['status'], error?: Error): SyncFile =>
  ({ path: `imap/mag/l1a/2024/01/x-${Math.random()}.cdf`, localPath: '/d/x', status, error }) as SyncFile;

describe("sync's summary", () => {
  it('says how many were not started, apart from the failed ones', () => {
    const notStarted = new MissionDataError('not attempted: the disk is full', NOT_ATTEMPTED, 1);
    const files = [
      file('downloaded'),
      file('downloaded'),
      file('failed', new LocalFileError('no space left', { code: 'E_NO_SPACE' })),
      file('failed', notStarted),
      file('failed', notStarted),
    ];
    expect(syncSummary(files, undefined, {})).toBe(
      '2 fetched, 1 failed (asked for again next run), 2 not started (asked for next run).',
    );
  });

  it('says nothing new when nothing was asked', () => {
    expect(syncSummary([], undefined, {})).toBe('nothing new.');
  });
});
