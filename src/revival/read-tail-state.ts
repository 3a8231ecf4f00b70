import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { decodeLine } from '../transcript/line-codec.ts';
import { scanRecords, type UnreadableReason } from '../transcript/scan-transcript.ts';
import {
  emptyTailState,
  foldTailState,
  type TailState,
  tailStateFromJson,
} from '../transcript/tail-state.ts';

/**
 * The folded state of a transcript, read without writing anything.
 *
 * @example
 * const read: TailRead = await readTailState('runs/a.jsonl');
 */
export type TailRead =
  | {
      ok: true;
      state: TailState;
      /** Bytes of the file as read, a torn tail included. */
      bytes: number;
      torn: boolean;
      /** The seq of the checkpoint the fold started from, or null for a read from the start. */
      fromCheckpoint: number | null;
    }
  | { ok: false; reason: UnreadableReason; detail: string; line?: number };

/**
 * Options for {@link readTailState}.
 *
 * @example
 * await readTailState(path, { strategy: 'full' }); // what a full parse gives
 */
export interface ReadTailOptions {
  fileSystem?: FileSystem;
  /** `tail` (default): start from the last checkpoint when there is one; `full`: from byte 0. */
  strategy?: 'tail' | 'full';
  /** Bytes per backward read while looking for the last checkpoint (tests lower it). */
  chunkBytes?: number;
  /**
   * Below this size (default 256 KiB) a file is simply read from the start: it is cheaper than
   * a search backwards that would mostly find no checkpoint. Tests set 0 to take the fast path
   * on small files.
   */
  fullScanBelowBytes?: number;
}

/** A checkpoint line starts with exactly these bytes, then its seq, then its type. */
const LINE_START = Buffer.from('{"v":1,"seq":');
const CHECKPOINT_TYPE = Buffer.from(',"type":"checkpoint"');
/** Room for the line start, a seq of up to 16 digits and the type member. */
const HEAD_BYTES = LINE_START.length + 16 + CHECKPOINT_TYPE.length;
const CHUNK_BYTES = 256 * 1024;
const FULL_SCAN_BELOW_BYTES = 256 * 1024;
/** A checkpoint holds a small state; a longer line is not one this reader will trust. */
const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;

/**
 * Fold a transcript into its {@link TailState} at a cost that does not grow with its length:
 * find the last checkpoint by reading backwards from the end, check it (its CRC, its seq, a
 * state this version wrote), and fold forward from it; with no usable checkpoint, fold from
 * the start. The answer is the one a full fold gives — the writer's checkpoint is the state
 * of everything before it — except that damage before the checkpoint goes unseen (a full
 * read, as `Session.open` does, still finds it). Never writes; never throws.
 *
 * @example
 * const read = await readTailState('runs/a.jsonl');
 * if (read.ok) console.log(read.state.revivals, read.fromCheckpoint);
 */
export async function readTailState(
  path: string,
  options: ReadTailOptions = {},
): Promise<TailRead> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  try {
    const checkpoint =
      options.strategy === 'full'
        ? null
        : await findLastCheckpoint(
            fileSystem,
            path,
            options.chunkBytes ?? CHUNK_BYTES,
            options.fullScanBelowBytes ?? FULL_SCAN_BELOW_BYTES,
          );
    let state = checkpoint?.state ?? emptyTailState();
    const iterator = scanRecords(
      path,
      checkpoint === null
        ? { fileSystem }
        : {
            fileSystem,
            start: { offset: checkpoint.offset, seq: checkpoint.seq, line: checkpoint.seq + 1 },
          },
    );
    for (;;) {
      const step = await iterator.next();
      if (step.done !== true) {
        state = foldTailState(state, step.value.record, step.value.info.length);
        continue;
      }
      const result = step.value;
      if (!result.ok) {
        const failure: TailRead = { ok: false, reason: result.reason, detail: result.detail };
        if (result.line !== undefined) failure.line = result.line;
        return failure;
      }
      return {
        ok: true,
        state,
        bytes: result.validBytes + (result.torn?.tornBytes ?? 0),
        torn: result.state === 'torn-tail',
        fromCheckpoint: checkpoint?.seq ?? null,
      };
    }
  } catch (error) {
    // The scanner reports its own failures; this guards the never-throws promise.
    return { ok: false, reason: 'io-error', detail: `${path}: cannot read (${String(error)})` };
  }
}

interface FoundCheckpoint {
  offset: number;
  seq: number;
  /** The state of every record before the checkpoint. */
  state: TailState;
}

/**
 * The last good checkpoint of a file, or null (none, or the file cannot be opened — the full
 * scan that follows says why). Reads backwards in chunks; each chunk carries the first bytes
 * of the one after it, so a line start split across two reads is still seen whole.
 */
async function findLastCheckpoint(
  fileSystem: FileSystem,
  path: string,
  chunkBytes: number,
  fullScanBelowBytes: number,
): Promise<FoundCheckpoint | null> {
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch {
    return null;
  }
  try {
    const size = await fileSystem.size(fd);
    if (size < fullScanBelowBytes) return null;
    let end = size;
    let carry: Buffer = Buffer.alloc(0);
    while (end > 0) {
      const start = Math.max(0, end - chunkBytes);
      const chunk = await readExactly(fileSystem, fd, start, end - start);
      if (chunk === null) return null;
      const window = Buffer.concat([chunk, carry]);
      for (
        let at = window.lastIndexOf(LINE_START, chunk.length - 1);
        at !== -1;
        at = at === 0 ? -1 : window.lastIndexOf(LINE_START, at - 1)
      ) {
        const offset = start + at;
        if (!(await startsLine(fileSystem, fd, window, at, offset))) continue;
        const seq = checkpointSeq(window, at + LINE_START.length);
        if (seq === null) continue;
        const found = await readCheckpoint(fileSystem, fd, offset, seq);
        if (found !== null) return found;
      }
      carry = chunk.subarray(0, Math.min(chunk.length, HEAD_BYTES));
      end = start;
    }
    return null;
  } catch {
    return null;
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
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
  const decoded = decodeLine(Buffer.concat(parts, length));
  if (!decoded.ok || decoded.record.type !== 'checkpoint' || decoded.record.seq !== seq) {
    return null;
  }
  const stored = (decoded.record as { state?: unknown }).state;
  if (typeof stored !== 'object' || stored === null) return null;
  const state = tailStateFromJson(stored as Parameters<typeof tailStateFromJson>[0]);
  if (state === null || state.lastSeq !== seq - 1 || state.records !== seq) return null;
  return plausible(state) ? { offset, seq, state } : null;
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
