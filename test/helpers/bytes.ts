/** Test bytes that differ at every offset and are the same run after run (a linear congruential sequence). */
export function pattern(size: number, seed = 1): Buffer {
  const buffer = Buffer.alloc(size);
  let state = seed;
  for (let index = 0; index < size; index += 1) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    buffer[index] = state & 0xff;
  }
  return buffer;
}
