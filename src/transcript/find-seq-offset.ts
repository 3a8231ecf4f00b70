import type { FileSystem } from './file-system.ts';

/** Every record line starts with these bytes, then its seq's digits. */
const LINE_START = Buffer.from('{"v":1,"seq":');
/** Room for the line start and a seq of up to 16 digits and what follows it. */
const HEAD_BYTES = LINE_START.length + 17;
const PROBE_BYTES = 4 * 1024;
/** Below this span the search walks line by line instead of halving. */
const WALK_BYTES = 16 * 1024;

/**
 * Where the line of record `seq` starts in a transcript of `size` bytes, found by bisecting
 * the file on the seqs that start its lines: records are written one per line with seqs
 * 0, 1, 2, …, so a seq's line lies between those of its neighbours. It reads a few KiB per
 * step, about 30 steps for a GiB, and none of the lines it jumps over.
 *
 * A guide, not a proof: the seqs it reads are not checksum-verified, so the caller reads the
 * line it is given with a scan that checks the seq it expects (and falls back to reading from
 * the start when it does not match). Null when the seq is not found, or a line start it meets
 * does not read as one (damage, or a line of another format version). Throws what the file
 * system throws.
 *
 * @example
 * const offset = await findSeqOffset(fileSystem, fd, size, 4096);
 * if (offset !== null) scanRecords(path, { fd, start: { offset, seq: 4096, line: 4097 } });
 */
export async function findSeqOffset(
  fileSystem: FileSystem,
  fd: number,
  size: number,
  seq: number,
): Promise<number | null> {
  if (!Number.isSafeInteger(seq) || seq < 0) return null;
  const buffer = Buffer.allocUnsafe(Math.max(PROBE_BYTES, HEAD_BYTES));
  // `low` is a line start whose seq is at most `seq`; the line of `seq` starts before `high`.
  let low = 0;
  let high = size;
  for (;;) {
    const lowSeq = await seqAt(fileSystem, fd, buffer, low);
    if (lowSeq === null || lowSeq > seq) return null;
    if (lowSeq === seq) return low;
    if (high - low <= WALK_BYTES) break;
    const middle = low + Math.floor((high - low) / 2);
    const start = await lineStartFrom(fileSystem, fd, buffer, middle, high);
    if (start === null) {
      high = middle;
      continue;
    }
    const startSeq = await seqAt(fileSystem, fd, buffer, start);
    if (startSeq === null) return null;
    if (startSeq === seq) return start;
    if (startSeq < seq) low = start;
    else high = middle;
  }
  // A short span: walk its lines.
  for (let at: number | null = low; at !== null && at < high; ) {
    const found = await seqAt(fileSystem, fd, buffer, at);
    if (found === null || found > seq) return null;
    if (found === seq) return at;
    at = await lineStartFrom(fileSystem, fd, buffer, at + 1, size);
  }
  return null;
}

/** The seq a line starting at `offset` declares, or null when it does not start like a record. */
async function seqAt(
  fileSystem: FileSystem,
  fd: number,
  buffer: Buffer,
  offset: number,
): Promise<number | null> {
  const read = await fileSystem.read(fd, buffer.subarray(0, HEAD_BYTES), offset);
  const head = buffer.subarray(0, read);
  if (read < LINE_START.length + 2 || !head.subarray(0, LINE_START.length).equals(LINE_START)) {
    return null;
  }
  let end = LINE_START.length;
  while (end < head.length && (head[end] as number) >= 0x30 && (head[end] as number) <= 0x39) {
    end += 1;
  }
  if (end === LINE_START.length || end === head.length || head[end] !== 0x2c) return null;
  // A leading zero is not how the writer writes a seq.
  if (head[LINE_START.length] === 0x30 && end > LINE_START.length + 1) return null;
  const value = Number(head.toString('latin1', LINE_START.length, end));
  return Number.isSafeInteger(value) ? value : null;
}

/** The first line start at or after `from` and before `limit`, or null when there is none. */
async function lineStartFrom(
  fileSystem: FileSystem,
  fd: number,
  buffer: Buffer,
  from: number,
  limit: number,
): Promise<number | null> {
  // A line starts at `from` when the byte before it ends a line: read from there.
  let position = from - 1;
  while (position < limit) {
    const read = await fileSystem.read(fd, buffer, position);
    if (read === 0) return null;
    const newline = buffer.subarray(0, read).indexOf(0x0a);
    if (newline !== -1) {
      const start = position + newline + 1;
      return start < limit ? start : null;
    }
    position += read;
  }
  return null;
}
