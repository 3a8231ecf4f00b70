import type { FileSystem } from './file-system.ts';
import { decodeLine } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';
import { type TailState, tailStateFromJson } from './tail-state.ts';

/*
 * Finding a transcript's last checkpoint: in bytes already read (the tail read's window), or
 * backwards through the file when the window holds none. Every candidate is checked — its
 * CRC, its seq, a state this version wrote — before a reader trusts it.
 */

/** A checkpoint line starts with exactly these bytes, then its seq, then its type. */
const LINE_START = Buffer.from('{"v":1,"seq":');
const CHECKPOINT_TYPE = Buffer.from(',"type":"checkpoint"');
/** Room for the line start, a seq of up to 16 digits and the type member. */
const HEAD_BYTES = LINE_START.length + 16 + CHECKPOINT_TYPE.length;
/** A checkpoint holds a small state; a longer line is not one this reader will trust. */
const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;

/**
 * A checkpoint a reader can start from.
 *
 * @example
 * const found = lastCheckpointIn(window, offset);
 * if (found !== null) console.log(found.seq, found.state.revivals);
 */
export interface FoundCheckpoint {
  offset: number;
  seq: number;
  /** The state of every record before the checkpoint. */
  state: TailState;
  /** The checkpoint record itself, decoded and checked: a reader folds it without reading it again. */
  record: TranscriptRecord | ForeignRecord;
  /** Bytes of its line, newline included: where the records after it start. */
  length: number;
}

/**
 * The last good checkpoint whose whole line lies in `bytes` (which start at file offset
 * `offset`), or null. A candidate at the very start of the bytes is skipped unless it is the
 * file's start: whether a line begins there is unknown.
 *
 * @example
 * const found = lastCheckpointIn(window.bytes, window.offset);
 */
export function lastCheckpointIn(bytes: Buffer, offset: number): FoundCheckpoint | null {
  for (
    let at = bytes.lastIndexOf(LINE_START);
    at !== -1;
    at = at === 0 ? -1 : bytes.lastIndexOf(LINE_START, at - 1)
  ) {
    if (at === 0 ? offset !== 0 : bytes[at - 1] !== 0x0a) continue;
    const seq = checkpointSeq(bytes, at + LINE_START.length);
    if (seq === null) continue;
    const newline = bytes.indexOf(0x0a, at);
    if (newline === -1) continue; // a torn tail, not a record
    const found = checkpointFromLine(bytes.subarray(at, newline), offset + at, seq);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The seq a version-1 line starts with, or null when it does not start like one: read from the
 * bytes, without parsing the line.
 *
 * @example
 * writtenSeq(Buffer.from('{"v":1,"seq":12,"type":"message"')); // 12
 */
export function writtenSeq(line: Buffer): number | null {
  return writtenSeqAt(line, 0, line.length);
}

/**
 * {@link writtenSeq} of the line `bytes[start, end)`, read where it lies (no view of the line).
 *
 * @example
 * writtenSeqAt(window, lineStart, window.indexOf(0x0a, lineStart)); // 12
 */
export function writtenSeqAt(bytes: Buffer, start: number, end: number): number | null {
  if (end - start <= LINE_START.length) return null;
  for (let index = 0; index < LINE_START.length; index++) {
    if (bytes[start + index] !== LINE_START[index]) return null;
  }
  const digits = start + LINE_START.length;
  let index = digits;
  let value = 0;
  while (index < end && index - digits < 16) {
    const byte = bytes[index] as number;
    if (byte < 0x30 || byte > 0x39) break;
    value = value * 10 + (byte - 0x30);
    index += 1;
  }
  return index === digits || index >= end || bytes[index] !== 0x2c ? null : value;
}

/**
 * The last good checkpoint of a file, or null (none, or the file cannot be read — the full
 * scan that follows says why). Reads backwards in chunks; each chunk carries the first bytes
 * of the one after it, so a line start split across two reads is still seen whole.
 *
 * @example
 * const found = await findLastCheckpoint(fileSystem, fd, 256 * 1024);
 */
export async function findLastCheckpoint(
  fileSystem: FileSystem,
  fd: number,
  chunkBytes: number,
): Promise<FoundCheckpoint | null> {
  try {
    const size = await fileSystem.size(fd);
    let end = size;
    // One buffer for the whole walk, however long the file: a chunk, then the carried bytes.
    const window = Buffer.allocUnsafe(Math.min(size, chunkBytes) + HEAD_BYTES);
    let carry: Buffer = Buffer.alloc(0);
    while (end > 0) {
      const start = Math.max(0, end - chunkBytes);
      const length = end - start;
      if (!(await readInto(fileSystem, fd, window.subarray(0, length), start))) return null;
      carry.copy(window, length);
      const view = window.subarray(0, length + carry.length);
      for (
        let at = view.lastIndexOf(LINE_START, length - 1);
        at !== -1;
        at = at === 0 ? -1 : view.lastIndexOf(LINE_START, at - 1)
      ) {
        const offset = start + at;
        if (!(await startsLine(fileSystem, fd, view, at, offset))) continue;
        const seq = checkpointSeq(view, at + LINE_START.length);
        if (seq === null) continue;
        const found = await readCheckpoint(fileSystem, fd, offset, seq);
        if (found !== null) return found;
      }
      carry = Buffer.from(view.subarray(0, Math.min(length, HEAD_BYTES)));
      end = start;
    }
    return null;
  } catch {
    return null;
  }
}

async function startsLine(
  fileSystem: FileSystem,
  fd: number,
  window: Buffer,
  at: number,
  offset: number,
): Promise<boolean> {
  if (offset === 0) return true;
  if (at > 0) return window[at - 1] === 0x0a;
  const before = await readExactly(fileSystem, fd, offset - 1, 1);
  return before?.[0] === 0x0a;
}

/** The seq of a checkpoint line whose digits start at `from`, or null for another record. */
function checkpointSeq(window: Buffer, from: number): number | null {
  let index = from;
  while (index < window.length && index - from < 16) {
    const byte = window[index] as number;
    if (byte < 0x30 || byte > 0x39) break;
    index += 1;
  }
  if (index === from) return null;
  const typeEnd = index + CHECKPOINT_TYPE.length;
  if (typeEnd > window.length) return null;
  if (!window.subarray(index, typeEnd).equals(CHECKPOINT_TYPE)) return null;
  const seq = Number(window.toString('latin1', from, index));
  return Number.isSafeInteger(seq) ? seq : null;
}

/** Read and check the checkpoint line at `offset`; null when it is not a good one. */
async function readCheckpoint(
  fileSystem: FileSystem,
  fd: number,
  offset: number,
  seq: number,
): Promise<FoundCheckpoint | null> {
  const parts: Buffer[] = [];
  let length = 0;
  let position = offset;
  for (;;) {
    const piece = Buffer.allocUnsafe(64 * 1024);
    const read = await fileSystem.read(fd, piece, position);
    if (read === 0) return null; // no newline: the line is a torn tail, not a record
    const newline = piece.subarray(0, read).indexOf(0x0a);
    const end = newline === -1 ? read : newline;
    parts.push(piece.subarray(0, end));
    length += end;
    if (length > MAX_CHECKPOINT_BYTES) return null;
    if (newline !== -1) break;
    position += read;
  }
  return checkpointFromLine(Buffer.concat(parts, length), offset, seq);
}

/** The checkpoint a line (without its newline) holds, when it is a good one of this seq. */
function checkpointFromLine(line: Buffer, offset: number, seq: number): FoundCheckpoint | null {
  const decoded = decodeLine(line);
  if (!decoded.ok || decoded.record.type !== 'checkpoint' || decoded.record.seq !== seq) {
    return null;
  }
  const stored = (decoded.record as { state?: unknown }).state;
  if (typeof stored !== 'object' || stored === null) return null;
  const state = tailStateFromJson(stored as Parameters<typeof tailStateFromJson>[0]);
  if (state === null || state.lastSeq !== seq - 1 || state.records !== seq) return null;
  if (!plausible(state)) return null;
  return { offset, seq, state, record: decoded.record, length: line.length + 1 };
}

/** A checkpoint's CRC proves it was written whole, not that its writer was this version. */
function plausible(state: TailState): boolean {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const callsOk = (value: unknown): boolean =>
    isObject(value) &&
    Array.isArray(value.calls) &&
    value.calls.every((call) => isObject(call) && typeof call.callId === 'string');
  return (
    (state.meta === null || isObject(state.meta)) &&
    (state.lastMessage === null || callsOk(state.lastMessage)) &&
    (state.turn === null || callsOk(state.turn)) &&
    state.open.every((item) => isObject(item) && typeof item.callId === 'string') &&
    state.revivedAfter.every((seq) => typeof seq === 'number')
  );
}

async function readInto(
  fileSystem: FileSystem,
  fd: number,
  buffer: Buffer,
  position: number,
): Promise<boolean> {
  let filled = 0;
  while (filled < buffer.length) {
    const read = await fileSystem.read(fd, buffer.subarray(filled), position + filled);
    if (read === 0) return false;
    filled += read;
  }
  return true;
}

async function readExactly(
  fileSystem: FileSystem,
  fd: number,
  position: number,
  length: number,
): Promise<Buffer | null> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const read = await fileSystem.read(fd, buffer.subarray(filled), position + filled);
    if (read === 0) return null;
    filled += read;
  }
  return buffer;
}
