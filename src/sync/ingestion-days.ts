/** The ingestion days a sync asks for: from the day before the newest one it has seen, a day of overlap. */

const DAY_MS = 86_400_000;

/** The ingestion day before that of `ingestionDate` (`YYYY-MM-DD HH:MM:SS`), as `YYYYMMDD`: a day of overlap. */
export function dayBefore(ingestionDate: string): string | undefined {
  const time = Date.parse(`${ingestionDate.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(time)) return undefined;
  return new Date(time - DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
}
