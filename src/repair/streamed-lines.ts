import { createHash } from 'node:crypto';
import type { ForeignLine } from './foreign-format.ts';

/**
 * One positional read of the session into `buffer` at `position`; the bytes read (0 at end).
 *
 * @example
 * const readAt: ReadAt = (buffer, position) => readSync(fd, buffer, 0, buffer.length, position);
 */
export type ReadAt = (buffer: Buffer, position: number) => number;

/** How much of the file one read takes: the memory of a pass is this plus the longest line. */
const CHUNK_BYTES = 256 * 1024;

/**
 * A session file's lines, read from the file every time they are iterated, in chunks of
 * 256 KiB: split on `\n` only, each parsed as JSON when it is (a line that is not keeps
 * `value` undefined), up to `end` (where a torn last line starts, or the size). Nothing of the
 * file is held between passes: a pass holds one chunk and the line being made, so what a
 * repair holds is a few times its longest line, plus what a format keeps.
 *
 * Every pass that reads the file to its end hashes the `size` bytes it read; a pass that sees
 * other bytes than the first (the file changed while it was planned from) or reads short sets
 * `changed`. `settle()` gives the digest every pass agreed on, which the commit checks the file
 * against instead of holding the bytes. A line longer than a chunk is hashed as the pass scans
 * it and made from a second read once its end is found: a rewrite in place undone between the
 * two would go unseen (the clients append, past the `size` bytes a pass reads).
 *
 * @example
 * const lines = new StreamedLines((buffer, at) => readSync(fd, buffer, 0, buffer.length, at), size, size);
 * for (const line of lines) console.log(line.number, line.value);
 */
export class StreamedLines implements Iterable<ForeignLine> {
  readonly size: number;
  readonly end: number;
  /** True once a pass saw bytes other than the first full pass, or fewer than `size`. */
  changed = false;
  #digest: string | undefined;
  readonly #readAt: ReadAt;
  readonly #chunkBytes: number;

  constructor(readAt: ReadAt, size: number, end: number, chunkBytes = CHUNK_BYTES) {
    this.#readAt = readAt;
    this.size = size;
    this.end = Math.min(end, size);
    this.#chunkBytes = Math.max(1, chunkBytes);
  }

  /** One pass over the file from its start: its lines, read in chunks, each made when reached. */
  *[Symbol.iterator](): Iterator<ForeignLine> {
    const hash = createHash('sha256');
    const chunk = Buffer.allocUnsafe(Math.min(this.#chunkBytes, Math.max(1, this.size)));
    // Where a line that runs past its chunk starts: it is read again whole, into a buffer of
    // its own size, once its end is found (never gathered piece by piece, which would hold it
    // more than once).
    let spanning: number | null = null;
    let number = 0;
    for (let position = 0; position < this.size; ) {
      const got = this.#readAt(
        chunk.subarray(0, Math.min(chunk.length, this.size - position)),
        position,
      );
      if (got <= 0) {
        this.changed = true;
        return;
      }
      const data = chunk.subarray(0, got);
      hash.update(data);
      const usable = Math.max(0, Math.min(got, this.end - position));
      for (let from = 0; from < usable; ) {
        const newline = data.indexOf(0x0a, from);
        if (newline === -1 || newline >= usable) {
          spanning ??= position + from;
          break;
        }
        const text =
          spanning === null
            ? data.toString('utf8', from, newline)
            : this.#textBetween(spanning, position + newline);
        spanning = null;
        if (text === null) return;
        number += 1;
        yield { number, text, value: parsed(text) };
        from = newline + 1;
      }
      position += got;
    }
    if (spanning !== null) {
      // A last record without its newline (a torn one ends before `end`, and is never here).
      const text = this.#textBetween(spanning, this.end);
      if (text === null) return;
      number += 1;
      yield { number, text, value: parsed(text) };
    }
    const digest = hash.digest('hex');
    if (this.#digest === undefined) this.#digest = digest;
    else if (digest !== this.#digest) this.changed = true;
  }

  /** The text of the bytes from `start` to `end`, read again; null (changed) if the file is short. */
  #textBetween(start: number, end: number): string | null {
    const bytes = Buffer.allocUnsafe(end - start);
    for (let filled = 0; filled < bytes.length; ) {
      const got = this.#readAt(bytes.subarray(filled), start + filled);
      if (got <= 0) {
        this.changed = true;
        return null;
      }
      filled += got;
    }
    return bytes.toString('utf8');
  }

  /**
   * The SHA-256 of the `size` bytes every full pass read, making one (without parsing) when
   * none has run yet; null when the passes did not all see the same bytes.
   */
  settle(): string | null {
    if (this.#digest === undefined && !this.changed) {
      const hash = createHash('sha256');
      const chunk = Buffer.allocUnsafe(Math.min(this.#chunkBytes, Math.max(1, this.size)));
      for (let position = 0; position < this.size; ) {
        const got = this.#readAt(
          chunk.subarray(0, Math.min(chunk.length, this.size - position)),
          position,
        );
        if (got <= 0) return null;
        hash.update(chunk.subarray(0, got));
        position += got;
      }
      this.#digest = hash.digest('hex');
    }
    return this.changed ? null : (this.#digest ?? null);
  }
}

/**
 * Where a session's data ends: a last line without its newline is torn — never data, its
 * offset in `tornAt`, the SHA-256 of its bytes in `tornDigest` — unless it parses as a whole
 * JSON object (`unterminated`): a process can die between writing a record and its newline,
 * and the clients read that record. Read backwards from the end, holding only that last line.
 *
 * @example
 * const tail = sessionTail(readAt, size); // { tornAt: 1840, unterminated: false, tornDigest: '…' }
 */
export function sessionTail(
  readAt: ReadAt,
  size: number,
  chunkBytes = CHUNK_BYTES,
): { tornAt: number | null; unterminated: boolean; tornDigest?: string } {
  const pieces: Buffer[] = [];
  let start = size;
  let lastNewline = -1;
  while (start > 0 && lastNewline === -1) {
    const from = Math.max(0, start - Math.max(1, chunkBytes));
    const piece = Buffer.allocUnsafe(start - from);
    for (let filled = 0; filled < piece.length; ) {
      const got = readAt(piece.subarray(filled), from + filled);
      if (got <= 0) throw new Error(`the file ended at ${from + filled} bytes, not ${size}`);
      filled += got;
    }
    const found = piece.lastIndexOf(0x0a);
    if (found === -1) {
      pieces.unshift(piece);
    } else {
      lastNewline = from + found;
      pieces.unshift(piece.subarray(found + 1));
    }
    start = from;
  }
  if (lastNewline === size - 1) return { tornAt: null, unterminated: false };
  const tail = Buffer.concat(pieces);
  const value = parsed(tail.toString('utf8'));
  if (typeof value === 'object' && value !== null) return { tornAt: null, unterminated: true };
  return {
    tornAt: lastNewline + 1,
    unterminated: false,
    tornDigest: createHash('sha256').update(tail).digest('hex'),
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
