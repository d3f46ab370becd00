/** Reads exact byte counts from a stream of chunks of any size. */
export class ChunkReader {
  private readonly it: AsyncIterator<Buffer>;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private done = false;

  constructor(source: AsyncIterable<Buffer>) {
    this.it = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes, or undefined at the end of the stream (a partial tail is dropped). */
  async read(n: number): Promise<Buffer | undefined> {
    while (this.buffered < n && !this.done) {
      const next = await this.it.next();
      if (next.done) this.done = true;
      else { this.chunks.push(next.value); this.buffered += next.value.length; }
    }
    if (this.buffered < n) return undefined;
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return out;
  }

  /** Consumes the rest of the stream (so a hash over the whole stream sees every byte). */
  async drain(): Promise<void> {
    this.chunks = [];
    this.buffered = 0;
    while (!this.done) if ((await this.it.next()).done) this.done = true;
  }
}
