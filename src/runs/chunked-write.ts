/**
 * Many small pieces of text written to `out` as chunks of about `chunkBytes` bytes: each piece
 * is encoded straight into the chunk, so no string of the whole exists and no string is made
 * per chunk (`status --database --json` writes 48 MB for 100,000 runs, in 100,000 pieces and
 * more). A piece too large for a chunk is written by itself. Call {@link end} to write the
 * last chunk.
 *
 * @example
 * const writer = new ChunkedWriter(io.stdout);
 * writer.write('{"runs":[');
 * writer.end();
 */
export class ChunkedWriter {
  readonly #out: NodeJS.WritableStream;
  readonly #chunkBytes: number;
  #chunk: Buffer;
  #used = 0;

  constructor(out: NodeJS.WritableStream, chunkBytes = 1 << 20) {
    this.#out = out;
    this.#chunkBytes = chunkBytes;
    this.#chunk = Buffer.allocUnsafe(chunkBytes);
  }

  write(piece: string): void {
    // At most 3 bytes of UTF-8 for each UTF-16 unit.
    if (this.#used + piece.length * 3 > this.#chunkBytes) {
      this.end();
      if (piece.length * 3 > this.#chunkBytes) {
        this.#out.write(piece);
        return;
      }
    }
    this.#used += this.#chunk.write(piece, this.#used);
  }

  /** Write what the chunk holds. */
  end(): void {
    if (this.#used === 0) return;
    this.#out.write(this.#chunk.subarray(0, this.#used));
    // The stream may hold the chunk until it is written: the next is a new one.
    this.#chunk = Buffer.allocUnsafe(this.#chunkBytes);
    this.#used = 0;
  }
}
