/**
 * The coverage calendar: for each product, every day of the range with the archive's latest version for it,
 * what the data root holds of it, and the runs of days without a file.
 */
import type { MissionFile } from '../naming/names.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { dateOf, dayNumber } from './days.js';
import { latestByDay, productKey } from './products.js';
import type { CoverageDay, CoverageGap, CoverageReport, ProductCoverage } from './types.js';

/**
 * Builds the report from the archive's files of the filters (any versions: the latest of each day is taken) and
 * the data root's. A file counts for the day it starts, as the service's date filters and `latest` count it.
 */
export function buildCoverage(
  archive: readonly MissionFile[],
  local: readonly MissionFile[],
  filters: QueryFilters,
): CoverageReport {
  const latest = latestByDay(archive);
  const localLatest = latestByDay(local);
  const localPaths = new Set(local.map((file) => file.path));
  const starts = [...latest.values()].map((file) => file.startDate).sort();
  const startDate = filters.startDate ?? starts[0];
  const endDate = filters.endDate ?? starts.at(-1);
  if (startDate === undefined || endDate === undefined || starts.length === 0) {
    return { startDate: startDate ?? '', endDate: endDate ?? '', products: [] };
  }
  const products = new Map<string, MissionFile>();
  for (const file of latest.values())
    if (!products.has(productKey(file))) products.set(productKey(file), file);
  const first = dayNumber(startDate);
  const last = dayNumber(endDate);
  const calendars = [...products.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, sample]): ProductCoverage => {
      const days: CoverageDay[] = [];
      for (let day = first; day <= last; day += 1) {
        const date = dateOf(day);
        const held = latest.get(`${key}|${date}`);
        const here = localLatest.get(`${key}|${date}`);
        if (!held) {
          days.push({ date, state: 'missing', ...(here ? { localVersion: here.version } : {}) });
          continue;
        }
        const state = !here ? 'archive' : localPaths.has(held.path) ? 'local' : 'outdated';
        days.push({
          date,
          state,
          version: held.version,
          filePath: held.path,
          ...(here ? { localVersion: here.version } : {}),
        });
      }
      return {
        table: sample.kind,
        instrument: sample.instrument,
        ...(sample.kind === 'science' ? { dataLevel: sample.dataLevel } : {}),
        descriptor: sample.descriptor,
        days,
        present: days.filter((day) => day.state !== 'missing').length,
        gaps: gapsOf(days),
      };
    });
  return { startDate, endDate, products: calendars };
}

/** The runs of missing days, in order. */
export function gapsOf(days: readonly CoverageDay[]): CoverageGap[] {
  const gaps: CoverageGap[] = [];
  let open: CoverageGap | undefined;
  for (const day of days) {
    if (day.state !== 'missing') {
      open = undefined;
      continue;
    }
    if (open) {
      open.end = day.date;
      open.days += 1;
    } else {
      open = { start: day.date, end: day.date, days: 1 };
      gaps.push(open);
    }
  }
  return gaps;
}
