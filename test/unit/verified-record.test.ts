/**
 * The verified-download record read by one process while another appends to it: every line appended is taken,
 * however many reads run at once.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { VerifiedRecord } from '../../src/data-root/verified.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'verified-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

it('takes every line another process appends, with reads at once between its appends', async () => {
  const writer = await VerifiedRecord.open(root);
  const reader = await VerifiedRecord.open(root);
  const file = join(root, 'data.cdf');
  await writeFile(file, 'x');
  const stats = await stat(file);
  let next = 0;
  const append = (count: number) => {
    for (let i = 0; i < count; i += 1, next += 1) {
      writer.add(
        `imap/mag/l1a/2024/01/file-${next}.cdf`,
        stats,
        `crc32:${next.toString(16).padStart(8, '0')}`,
      );
    }
    writer.flush();
  };
  for (let round = 0; round < 20; round += 1) {
    append(5);
    // Two reads at once, as two files of a batch refresh at their turns; then more lines than they read.
    await Promise.all([reader.refresh(), reader.refresh()]);
    append(12);
    await reader.refresh();
  }
  for (let i = 0; i < next; i += 1) {
    expect(reader.recorded(`imap/mag/l1a/2024/01/file-${i}.cdf`), `file-${i}`).toBeDefined();
  }
  writer.close();
  reader.close();
});
