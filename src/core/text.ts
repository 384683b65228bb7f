/** Text helpers for messages. */

/** The start of a long text, for messages. */
export function snippet(text: string, length = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `1536` -> `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/**
 * A whole number with commas between its thousands (`12,000`), as `toLocaleString('en-US')` writes it: the first
 * call of that loads ICU's number formats, about 9 ms of a command's run for one summary line.
 */
export function withThousands(count: number): string {
  if (!Number.isSafeInteger(count)) return count.toLocaleString('en-US');
  const digits = String(Math.abs(count)).replace(/\B(?=(\d{3})+$)/g, ',');
  return count < 0 ? `-${digits}` : digits;
}
