/** Date ranges of a query that no file could match. */

/** The date pairs whose start is after their end: no file could match, so the query is refused, naming both. */
export function reversedRanges(params: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [start, end] of [
    ['start_date', 'end_date'],
    ['ingestion_start_date', 'ingestion_end_date'],
  ] as const) {
    const from = params[start];
    const to = params[end];
    if (from !== undefined && to !== undefined && /^\d{8}$/.test(from) && /^\d{8}$/.test(to) && from > to) {
      problems.push(`The ${start} ${from} is after the ${end} ${to}: no file can match; swap the two dates.`);
    }
  }
  return problems;
}
