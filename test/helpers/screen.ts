/**
 * What a terminal shows after receiving `text`: carriage returns, line feeds, erase and cursor codes applied,
 * lines wrapped at `columns`. Enough of a terminal for progress lines and spinners (ora's erase codes).
 */
export function screenText(text: string, columns = 80): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => {
    while (lines.length <= row) lines.push([]);
    return lines[row] as string[];
  };
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '\u001b') {
      // CSI: ESC [ parameters final-letter.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is parsed here
      const match = /^\u001b\[([?\d;]*)([A-Za-z])/.exec(text.slice(index));
      if (!match) continue;
      index += match[0].length - 1;
      const [, params = '', command] = match;
      const n = Number.parseInt(params, 10);
      if (command === 'K') {
        const current = line();
        if (params === '2') current.length = 0;
        else if (params === '1') current.fill(' ', 0, col);
        else current.length = Math.min(current.length, col);
      } else if (command === 'A') row = Math.max(0, row - (Number.isNaN(n) ? 1 : n));
      else if (command === 'B') row += Number.isNaN(n) ? 1 : n;
      else if (command === 'G') col = (Number.isNaN(n) ? 1 : n) - 1;
      else if (command === 'J') lines.length = row + 1;
      continue;
    }
    if (char === '\r') col = 0;
    else if (char === '\n') {
      row += 1;
      col = 0;
    } else {
      if (col >= columns) {
        row += 1;
        col = 0;
      }
      const current = line();
      while (current.length < col) current.push(' ');
      current[col] = char;
      col += 1;
    }
  }
  const shown = lines.map((cells) => cells.join('').trimEnd());
  while (shown.length > 0 && shown.at(-1) === '') shown.pop();
  return shown;
}
