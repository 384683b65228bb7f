/** Text helpers for messages. */

/** The start of a long text, for messages. */
export function snippet(text: string, length = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}
