/**
 * What became of a batch's files, counted as they settle, and the closing lines made of it: the summary, why
 * files were not started, and each hint once.
 */
import { AbortedError, isMissionDataError, type MissionDataError, NOT_ATTEMPTED } from '../core/errors.js';
import { commandLineHint } from './hints.js';
import { summaryLines } from './summary.js';
import type { TransferTally } from './transfer-tally.js';
import type { SettledFile, TransferWords } from './transfer-types.js';

/** The counts of settled files by status, the files not started, and the hints of the failures. */
export class TransferOutcome {
  private readonly counts = new Map<string, number>();
  private readonly hints = new Set<string>();
  /** Files never attempted because the batch stopped: summed up in one line, not listed. */
  private notAttempted = 0;
  private notAttemptedWhy: string | undefined;
  private dataRootFailureShown = false;
  /** Files that failed (those not started aside). */
  failed = 0;

  /** The error of a file the batch never started, if it is one. */
  static notStarted(file: SettledFile): MissionDataError | undefined {
    return isMissionDataError(file.error) && file.error.code === NOT_ATTEMPTED ? file.error : undefined;
  }

  /** Counts a file never started; a cancellation says why in the closing note, not here. */
  countNotStarted(error: MissionDataError): void {
    this.notAttempted += 1;
    if (!(error.cause instanceof AbortedError)) {
      this.notAttemptedWhy ??= error.message.replace(/^not attempted: /, '');
    }
  }

  /**
   * Counts a settled file; true when its failure repeats a cause already told: a full or read-only data root
   * fails every file in flight the same way, and is told once.
   */
  count(file: SettledFile, failed: boolean): boolean {
    this.counts.set(file.status, (this.counts.get(file.status) ?? 0) + 1);
    if (!failed) return false;
    this.failed += 1;
    const hint = commandLineHint(file.error);
    if (hint) this.hints.add(hint);
    const dataRootFailure =
      isMissionDataError(file.error) &&
      (file.error.code === 'E_DATA_ROOT' || file.error.code === 'E_NO_SPACE');
    const repeated = dataRootFailure && this.dataRootFailureShown;
    if (dataRootFailure) this.dataRootFailureShown = true;
    return repeated;
  }

  /** The closing lines: the summary (quiet: only why files were left alone), `extra`, then the hints. */
  closingLines(
    words: TransferWords,
    tally: TransferTally,
    elapsedMs: number,
    quiet: boolean | undefined,
    extra: string | undefined,
  ): string[] {
    const lines = summaryLines({
      statuses: words.statuses,
      counts: this.counts,
      notStarted: this.notAttempted,
      notStartedWhy: this.notAttemptedWhy,
      bytes: tally.settledBytes,
      keptBytes: tally.keptBytes,
      elapsedMs,
    });
    // Quiet keeps only why files were left alone: the counts are the summary proper.
    const shown = quiet ? lines.filter((line) => line.startsWith('Stopped:')) : lines;
    if (extra && !quiet) shown.push(extra);
    return [...shown, ...[...this.hints].map((hint) => `Hint: ${hint}`)];
  }
}
