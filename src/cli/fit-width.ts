/**
 * Lines fitted to a terminal's width without wrapping. Widths count characters (code points): the lines fitted
 * here are the tool's own words, numbers and paths.
 */

/** Where a clause of a line ends: a comma, semicolon or colon followed by a space. */
const CLAUSE_END = /[,;:] /g;

/**
 * `text` within `width` columns by dropping whole clauses from its end, `…` in their place, so what a line says
 * first (what happened) stays and the detail goes: `1 fetched, 1 superseded version kept…`. A first clause wider
 * than the width is cut at its end.
 */
export function fitClauses(text: string, width: number): string {
  const characters = [...text];
  if (characters.length <= width) return text;
  const room = Math.max(0, width - 1);
  let fits: string | undefined;
  for (const match of text.matchAll(CLAUSE_END)) {
    // The clause's own punctuation goes with what follows it.
    const kept = text.slice(0, match.index);
    if ([...kept].length > room) break;
    fits = kept;
  }
  return `${fits ?? characters.slice(0, room).join('')}…`;
}

/** `text` within `width` columns, `…` in place of its middle: a path keeps its start and its file name. */
export function elideMiddle(text: string, width: number): string {
  const characters = [...text];
  if (characters.length <= width) return text;
  const keep = Math.max(1, width - 1);
  const head = Math.ceil(keep / 2);
  return `${characters.slice(0, head).join('')}…${characters.slice(characters.length - (keep - head)).join('')}`;
}
