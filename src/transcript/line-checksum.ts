import { crc32 } from 'node:zlib';

/*
 * The check of a line's checksum (docs/transcript-format.md: CRC-32 of the line with its
 * `,"crc":"…"` member removed, the member last and of fixed width), on the line where it lies
 * in a buffer. `checksumProblem` (line-codec.ts) is this for a line of its own.
 */

const CRC_SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const CRC_PREFIX = Buffer.from(',"crc":"');
const CLOSING_BRACE = Buffer.from('}');

/**
 * `checksumProblem` of the line `bytes[start, end)` (without its newline), read where it
 * lies: a reader checking every line of a buffer makes no view of each.
 *
 * @example
 * const newline = window.indexOf(0x0a, start);
 * if (checksumProblemAt(window, start, newline) === null) console.log('as written');
 */
export function checksumProblemAt(bytes: Uint8Array, start: number, end: number): string | null {
  const length = end - start;
  if (length < CRC_SUFFIX_LENGTH + 2 || bytes[end - 1] !== 0x7d || bytes[end - 2] !== 0x22) {
    return 'the line has no checksum';
  }
  const suffixStart = end - CRC_SUFFIX_LENGTH;
  for (let index = 0; index < CRC_PREFIX.length; index++) {
    if (bytes[suffixStart + index] !== CRC_PREFIX[index]) return 'the line has no checksum';
  }
  const stored = storedChecksum(bytes, suffixStart + CRC_PREFIX.length);
  if (stored === -1) return 'the checksum is not 8 hex digits';
  if (crc32(CLOSING_BRACE, crc32(bytes.subarray(start, suffixStart))) !== stored) {
    return 'the checksum does not match the line';
  }
  return null;
}

/** The 8 lower-case hex digits at `from` as a number, or -1 when they are not that. */
function storedChecksum(line: Uint8Array, from: number): number {
  let value = 0;
  for (let index = from; index < from + 8; index++) {
    const byte = line[index] as number;
    let digit: number;
    if (byte >= 0x30 && byte <= 0x39) digit = byte - 0x30;
    else if (byte >= 0x61 && byte <= 0x66) digit = byte - 0x57;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}
