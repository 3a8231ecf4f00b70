/**
 * Write many small pieces of text to `out` as chunks of about `chunkBytes` bytes: each piece
 * is encoded straight into the chunk, so no string of the whole exists and no string is made
 * per chunk (`status --database --json` writes 48 MB for 100,000 runs, in 100,000 pieces and
 * more). A piece too large for a chunk is written by itself. Returns what `pieces` returns.
 *
 * @example
 * const summary = writeChunked(io.stdout, statusJsonFromParts(parts, forest, 3));
 */
export function writeChunked<R>(
  out: NodeJS.WritableStream,
  pieces: Iterator<string, R>,
  chunkBytes = 1 << 20,
): R {
  let chunk = Buffer.allocUnsafe(chunkBytes);
  let used = 0;
  const flush = (): void => {
    if (used === 0) return;
    out.write(chunk.subarray(0, used));
    // The stream may hold the chunk until it is written: the next is a new one.
    chunk = Buffer.allocUnsafe(chunkBytes);
    used = 0;
  };
  for (;;) {
    const next = pieces.next();
    if (next.done === true) {
      flush();
      return next.value;
    }
    const piece = next.value;
    // At most 3 bytes of UTF-8 for each UTF-16 unit.
    if (used + piece.length * 3 > chunkBytes) {
      flush();
      if (piece.length * 3 > chunkBytes) {
        out.write(piece);
        continue;
      }
    }
    used += chunk.write(piece, used);
  }
}
