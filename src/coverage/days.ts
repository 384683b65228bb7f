/** Calendar days as whole numbers (days since 1970-01-01, UTC), so ranges and gaps are plain arithmetic. */

const DAY_MS = 86_400_000;

/** The day number of a `YYYYMMDD` date (a date the naming rules accepted). */
export function dayNumber(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8))) / DAY_MS;
}

/** The `YYYYMMDD` date of a day number. */
export function dateOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
}

/** `YYYY-MM-DD`, as people read a `YYYYMMDD` date. */
export function showDate(date: string): string {
  return `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
}

/** How many days month `month` (1-12) of `year` has. */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The months from `start` to `end` (day numbers), each as year, month (1-12) and the day number of its 1st. */
export function monthsBetween(
  start: number,
  end: number,
): Array<{ year: number; month: number; first: number }> {
  const months: Array<{ year: number; month: number; first: number }> = [];
  const from = dateOf(start);
  let year = Number(from.slice(0, 4));
  let month = Number(from.slice(4, 6));
  for (;;) {
    const first = Date.UTC(year, month - 1, 1) / DAY_MS;
    if (first > end) break;
    months.push({ year, month, first });
    month += 1;
    if (month > 12) {
      month = 1;
      year += 1;
    }
  }
  return months;
}
