/**
 * The coverage calendar: for each product, every day of the range with the archive's latest version for it,
 * what the data root holds of it, and the runs of days without a file. A calendar is of science products (or,
 * with the ancillary table, of ancillary files): files of the other kinds (quicklooks, dependency files, release
 * manifests, SPICE kernels) are not products of a day and are left out.
 */
import type { AncillaryFile, MissionFile, ScienceFile } from '../naming/file-types.js';
import type { QueryFilters } from '../naming/query-vocabulary.js';
import { compareVersions } from '../naming/versions.js';
import { dateOf, dayNumber } from './days.js';
import { dayKey, latestByDay, productKey } from './products.js';
import { calendarTable } from './scope.js';
import type { CoverageDay, CoverageGap, CoverageReport, DayState, ProductCoverage } from './types.js';

/** A file a calendar shows: a science file (either generation) or an ancillary file. */
type CalendarFile = ScienceFile | AncillaryFile;

/** The files of one product, by the day they start: on a day of several repointings, one latest file each. */
interface ProductDays {
  sample: CalendarFile;
  days: Map<string, CalendarFile[]>;
}

/** The files of `table` among `files`, each the latest of its day key. */
function latestOfTable(files: readonly MissionFile[], table: CalendarFile['kind']): CalendarFile[] {
  const kept = files.filter((file): file is CalendarFile => file.kind === table);
  return [...latestByDay(kept).values()] as CalendarFile[];
}

/** The files grouped by product key, then by start day. */
function byProductAndDay(files: readonly CalendarFile[]): Map<string, ProductDays> {
  const products = new Map<string, ProductDays>();
  for (const file of files) {
    const key = productKey(file);
    let product = products.get(key);
    if (!product) {
      product = { sample: file, days: new Map() };
      products.set(key, product);
    }
    const list = product.days.get(file.startDate);
    if (list) list.push(file);
    else product.days.set(file.startDate, [file]);
  }
  return products;
}

/** The newest of some versions of one product (the first when they tie). */
function newestOf<File extends { version: string }>(files: readonly File[]): File | undefined {
  let newest: File | undefined;
  for (const file of files) if (!newest || compareVersions(file.version, newest.version) > 0) newest = file;
  return newest;
}

/**
 * Builds the report from the archive's files of the filters (any versions: the latest of each day is taken) and
 * the data root's. A file counts for the day it starts, as the service's date filters and `latest` count it; a
 * day with files of several repointings shows the newest of them, and is here only when every one is.
 */
export function buildCoverage(
  archive: readonly MissionFile[],
  local: readonly MissionFile[],
  filters: QueryFilters,
): CoverageReport {
  const table = calendarTable(filters);
  const latest = latestOfTable(archive, table);
  const localLatest = latestOfTable(local, table);
  const starts = latest.map((file) => file.startDate).sort();
  const startDate = filters.startDate ?? starts[0];
  const endDate = filters.endDate ?? starts.at(-1);
  if (startDate === undefined || endDate === undefined || starts.length === 0) {
    return { startDate: startDate ?? '', endDate: endDate ?? '', products: [] };
  }
  const here: LocalView = {
    byDayKey: new Map(localLatest.map((file) => [dayKey(file), file])),
    byProduct: byProductAndDay(localLatest),
    paths: new Set(local.map((file) => file.path)),
  };
  const first = dayNumber(startDate);
  const last = dayNumber(endDate);
  const calendars = [...byProductAndDay(latest).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, product]): ProductCoverage => {
      const days: CoverageDay[] = [];
      for (let day = first; day <= last; day += 1) days.push(dayOfProduct(key, product, dateOf(day), here));
      const { sample } = product;
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

/** What the data root holds, as a calendar looks it up. */
interface LocalView {
  /** The latest local file of each day key. */
  byDayKey: ReadonlyMap<string, CalendarFile>;
  byProduct: ReadonlyMap<string, ProductDays>;
  /** Every local file's storage path. */
  paths: ReadonlySet<string>;
}

/** Which state wins when a day's files differ: anything older here first, then anything not here. */
const STATE_ORDER: readonly DayState[] = ['outdated', 'archive', 'local'];

/** One day of one product: the archive's latest files that start that day, against the data root's. */
function dayOfProduct(key: string, product: ProductDays, date: string, here: LocalView): CoverageDay {
  const held = product.days.get(date) ?? [];
  const localNewest = newestOf(here.byProduct.get(key)?.days.get(date) ?? []);
  const localVersion = localNewest ? { localVersion: localNewest.version } : {};
  const newest = newestOf(held);
  if (!newest) return { date, state: 'missing', ...localVersion };
  const states = held.map((file): DayState => {
    if (!here.byDayKey.has(dayKey(file))) return 'archive';
    return here.paths.has(file.path) ? 'local' : 'outdated';
  });
  const state = STATE_ORDER.find((candidate) => states.includes(candidate)) ?? 'archive';
  return { date, state, version: newest.version, filePath: newest.path, ...localVersion };
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
