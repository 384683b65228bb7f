/**
 * Suggestions for a value that is not one of a fixed list: the same value in another case, or the values a
 * typing slip away from it. Plain functions: the command line's option table uses them at start-up.
 */

/**
 * The closest values to `value` among `choices`, in alphabetical order; none when nothing is close. The members
 * of a family the value names come with the values a slip away: `hi` → hi-45, hi-90, hit.
 */
export function closestChoices(value: string, choices: readonly string[]): string[] {
  const wanted = value.toLowerCase();
  const exact = choices.filter((choice) => choice.toLowerCase() === wanted);
  if (exact.length > 0) return exact;
  // One slip for short words, a third of the word for longer ones: `magg` → mag, `ultra45` → ultra-45, but
  // `xyz` suggests nothing rather than some three-letter instrument.
  const allowed = Math.max(1, Math.floor(wanted.length / 3));
  const scored = choices
    .map((choice) => ({ choice, distance: editDistance(wanted, choice.toLowerCase()) }))
    .filter(({ distance }) => distance <= allowed);
  const best = Math.min(...scored.map(({ distance }) => distance));
  const slips = scored.filter(({ distance }) => distance === best).map(({ choice }) => choice);
  // A family name: `ultra` → ultra-45, ultra-90.
  const family =
    wanted.length >= 2 ? choices.filter((choice) => choice.toLowerCase().startsWith(wanted)) : [];
  return [...new Set([...slips, ...family])].sort();
}

/**
 * One sentence suggesting what `value` may have meant among `choices`, or undefined when nothing is close:
 * "Did you mean mag?", or for a value in the wrong case "Instruments are written in lower case: did you
 * mean mag?" (`plural` names the kind of value).
 */
export function didYouMean(value: string, choices: readonly string[], plural = 'values'): string | undefined {
  const close = closestChoices(value, choices);
  // More than three equally close values guess nothing: `l1x` is as near l1, l1a, l1b, l1c and l1d.
  if (close.length === 0 || close.length > 3 || close.includes(value)) return undefined;
  const list =
    close.length === 1 ? close[0] : `${close.slice(0, -1).join(', ')} or ${close[close.length - 1]}`;
  const caseOnly = close.some((choice) => choice.toLowerCase() === value.toLowerCase());
  if (caseOnly) {
    const lower = close.every((choice) => choice === choice.toLowerCase());
    const kind = `${plural[0]?.toUpperCase()}${plural.slice(1)}`;
    return `${kind} are written in ${lower ? 'lower case' : 'a case of their own'}: did you mean ${list}?`;
  }
  return `Did you mean ${list}?`;
}

/** Damerau-Levenshtein distance (optimal string alignment): a swap of two neighbours counts as one slip. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, row) =>
    Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  const at = (row: number, column: number) => table[row]?.[column] ?? 0;
  for (let row = 1; row < rows; row += 1) {
    for (let column = 1; column < columns; column += 1) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let best = Math.min(at(row - 1, column) + 1, at(row, column - 1) + 1, at(row - 1, column - 1) + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) {
        best = Math.min(best, at(row - 2, column - 2) + 1);
      }
      (table[row] as number[])[column] = best;
    }
  }
  return at(rows - 1, columns - 1);
}
