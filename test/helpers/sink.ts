/** A stdout for tests: it keeps what is written to it, and can stop taking writes like a reader that stopped reading. */
import { Writable } from 'node:stream';

export class Sink extends Writable {
  readonly chunks: Buffer[] = [];
  /** While set, writes wait for `release` (a reader that has stopped reading). */
  held: (() => void)[] | undefined;

  constructor(highWaterMark?: number) {
    super(highWaterMark === undefined ? {} : { highWaterMark });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    if (this.held) this.held.push(() => done());
    else done();
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const done of waiting) done();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
