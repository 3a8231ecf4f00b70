import { damaged, typeMayDispatch } from './classify-tail.ts';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { checksumProblemAt } from './line-checksum.ts';
import { checksumProblem, decodeLine } from './line-codec.ts';
import { LineScanner } from './line-scanner.ts';
import {
  type ScanResult,
  type ScanStart,
  scanRecords,
  type UnreadableReason,
} from './scan-transcript.ts';
import {
  assumeTurnDispatched,
  emptyTailState,
  foldTailState,
  type TailState,
} from './tail-state.ts';
import {
  type FoundCheckpoint,
  findLastCheckpoint,
  lastCheckpointIn,
  writtenSeq,
  writtenSeqAt,
} from './last-checkpoint.ts';

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
  /**
   * Bytes read in one go from the end of the file (default 64 KiB), where the last checkpoint
   * is looked for first: the writer puts one every 32 KiB, so it is almost always there, and a
   * smaller file is read whole at once. Tests lower it.
   */
  windowBytes?: number;
  /** Bytes per backward read when the window holds no checkpoint (tests lower it). */
  chunkBytes?: number;
}

/**
 * How much of a transcript's end `readTailState` reads in one go by default.
 *
 * @example
 * const whole = size <= WINDOW_BYTES; // read at once, from the start
 */
export const WINDOW_BYTES = 64 * 1024;
const CHUNK_BYTES = 256 * 1024;

/**
 * Fold a transcript into its {@link TailState} at a cost that does not grow with its length:
 * read the last 64 KiB (one read; a smaller file whole), find the last checkpoint there — or,
 * rarely, further back, reading backwards — check it (its CRC, its seq, a state this version
 * wrote), and fold forward from it, decoding the bytes already read; with no usable
 * checkpoint, fold from the start. The answer is the one a full fold gives — the writer's
 * checkpoint is the state of everything before it — except that damage before the checkpoint
 * goes unseen (a full read, as `Session.open` does, still finds it). Never writes; never throws.
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
  if (options.strategy === 'full') return fold(scanRecords(path, { fileSystem }), null);
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch {
    // The scan opens it again and names the cause (missing, a folder, …).
    return fold(scanRecords(path, { fileSystem }), null);
  }
  const spare = takeSpareWindow();
  try {
    const windowBytes = Math.max(1, options.windowBytes ?? WINDOW_BYTES);
    const window = await readWindow(fileSystem, fd, windowBytes, spare);
    const next = windowStep(path, window);
    if (next.kind === 'done') return next.read;
    if (next.kind === 'scan') {
      const { bytes, start, found } = next;
      return await fold(
        scanRecords(
          path,
          start === undefined
            ? { fileSystem, fd, prefetched: { bytes, atEnd: false } }
            : { fileSystem, fd, start, prefetched: { bytes, atEnd: false } },
        ),
        found,
      );
    }
    const further = await findLastCheckpoint(fileSystem, fd, options.chunkBytes ?? CHUNK_BYTES);
    return await fold(
      scanRecords(
        path,
        further === null ? { fileSystem, fd } : { fileSystem, fd, start: startOf(further) },
      ),
      further,
    );
  } catch (error) {
    // The scanner reports its own failures; this guards the never-throws promise.
    return { ok: false, reason: 'io-error', detail: `${path}: cannot read (${String(error)})` };
  } finally {
    // Not awaited: the answer does not depend on it, and waiting would add a round trip.
    void fileSystem.close(fd).catch(() => undefined);
    // Nothing returned refers to it: records are decoded into new strings and objects, and the
    // scanner copies the bytes it keeps.
    if (spareWindows.length < MAX_SPARE_WINDOWS) spareWindows.push(spare);
  }
}

/**
 * The bytes at the end of a transcript, as {@link readTailState} reads them in one go: `bytes`
 * start at file offset `offset`; `atEnd` says they reach the end of the file as its size was
 * when they were read.
 *
 * @example
 * const window: TailWindow = { bytes, offset: size - bytes.length, atEnd: true };
 */
export interface TailWindow {
  bytes: Buffer;
  offset: number;
  atEnd: boolean;
}

/**
 * {@link readTailState}'s answer from the window alone, when the window decides it: the window
 * reaches the end of the file and holds the last checkpoint, or the whole file. Null when more
 * must be read (no checkpoint in a window that starts past byte 0, or a file that grew while
 * it was read): the caller then reads as {@link readTailState} does. With `full`, the answer
 * of a read from byte 0 (`strategy: 'full'`), given only when the window is the whole file.
 * Reads nothing itself, and keeps no reference to `window.bytes`.
 *
 * @example
 * const read = tailReadOfWindow(path, { bytes, offset: 0, atEnd: true }); // a small file, whole
 */
export function tailReadOfWindow(
  path: string,
  window: TailWindow,
  strategy: 'tail' | 'full' = 'tail',
): TailRead | null {
  if (strategy === 'full') {
    return window.offset === 0 && window.atEnd
      ? foldBytes(path, window.bytes, undefined, null)
      : null;
  }
  const next = windowStep(path, window);
  return next.kind === 'done' ? next.read : null;
}

/** What a window decides: the answer, a scan on from its bytes, or a search further back. */
type WindowStep =
  | { kind: 'done'; read: TailRead }
  | {
      kind: 'scan';
      bytes: Buffer;
      start: ScanStart | undefined;
      found: FoundCheckpoint | null;
    }
  | { kind: 'search' };

function windowStep(path: string, window: TailWindow): WindowStep {
  const found = lastCheckpointIn(window.bytes, window.offset);
  const damage = found === null ? null : damageBefore(path, window.bytes, window.offset, found);
  if (damage !== null) return { kind: 'done', read: damage };
  if (found === null && window.offset !== 0) return { kind: 'search' };
  const bytes =
    found === null ? window.bytes : window.bytes.subarray(startOf(found).offset - window.offset);
  const start = found === null ? undefined : startOf(found);
  // Everything to fold is in memory: fold it without a promise per record.
  if (window.atEnd) return { kind: 'done', read: foldBytes(path, bytes, start, found) };
  return { kind: 'scan', bytes, start, found };
}

/*
 * Window buffers are reused, not allocated for every read. A fresh 64 KiB buffer comes from
 * malloc as pages the kernel has not mapped yet, faulted in one by one as the read fills them,
 * and goes back only when V8's garbage collector frees it. Over the 10,000 transcripts of the
 * bench's `status` the reuse saves about 6,000 page faults and 0.15–0.2 s. A reader takes a
 * window for its whole read and gives it back at the end, so concurrent reads each have one.
 */
const spareWindows: Buffer[] = [];
const MAX_SPARE_WINDOWS = 4;

function takeSpareWindow(): Buffer {
  return spareWindows.pop() ?? Buffer.allocUnsafeSlow(WINDOW_BYTES);
}

/** Where the fold resumes: the record after the checkpoint, which was decoded when found. */
function startOf(checkpoint: FoundCheckpoint): { offset: number; seq: number; line: number } {
  return {
    offset: checkpoint.offset + checkpoint.length,
    seq: checkpoint.seq + 1,
    line: checkpoint.seq + 2,
  };
}

/** The state the fold resumes from: the checkpoint's, with the checkpoint itself folded in. */
function stateAfter(checkpoint: FoundCheckpoint | null): TailState {
  if (checkpoint === null) return emptyTailState();
  return foldTailState(checkpoint.state, checkpoint.record, checkpoint.length);
}

/** Fold what a scan yields, starting from a checkpoint's state (or from nothing). */
async function fold(
  iterator: ReturnType<typeof scanRecords>,
  checkpoint: FoundCheckpoint | null,
): Promise<TailRead> {
  let state = stateAfter(checkpoint);
  for (;;) {
    const step = await iterator.next();
    if (step.done !== true) {
      state = foldTailState(state, step.value.record, step.value.info.length);
      continue;
    }
    return tailRead(step.value, state, checkpoint);
  }
}

/** {@link fold} for bytes that reach the end of the file. */
function foldBytes(
  path: string,
  bytes: Buffer,
  start: ScanStart | undefined,
  checkpoint: FoundCheckpoint | null,
): TailRead {
  const scanner = new LineScanner(path, start);
  let state = stateAfter(checkpoint);
  const base = start?.offset ?? 0;
  for (let from = 0; from < bytes.length && scanner.failure === null; ) {
    from += scanner.feed(bytes.subarray(from));
    // A line streamed rather than buffered is in memory here: hand it back from the bytes.
    const pending = scanner.pendingLine;
    if (pending !== null) {
      const at = pending.offset - base;
      scanner.supplyLine(bytes.subarray(at, at + pending.length));
    }
    for (const { record, info } of scanner.take()) {
      state = foldTailState(state, record, info.length);
    }
  }
  return tailRead(scanner.finish(), state, checkpoint);
}

function tailRead(
  result: ScanResult,
  state: TailState,
  checkpoint: FoundCheckpoint | null,
): TailRead {
  if (!result.ok) {
    const failure: TailRead = { ok: false, reason: result.reason, detail: result.detail };
    if (result.line !== undefined) failure.line = result.line;
    return failure;
  }
  // Opening repairs a torn tail, and the repair marks the last turn's unstarted calls as
  // possibly dispatched unless the torn bytes show a record that cannot dispatch: say now what
  // the repair will make of them, so that inspect, status and revive tell the same story.
  const torn = result.state === 'torn-tail' ? result.torn : undefined;
  const predicted =
    torn !== undefined && typeMayDispatch(torn.declaredType)
      ? assumeTurnDispatched(state, result.lastSeq + 1)
      : state;
  return {
    ok: true,
    state: predicted,
    bytes: result.validBytes + (result.torn?.tornBytes ?? 0),
    torn: result.state === 'torn-tail',
    fromCheckpoint: checkpoint?.seq ?? null,
  };
}

/**
 * The last `windowBytes` of the file, in one read (a smaller file whole). `atEnd`: the bytes
 * reach the end of the file as its size was then, so the scan reads nothing after them.
 */
async function readWindow(
  fileSystem: FileSystem,
  fd: number,
  windowBytes: number,
  spare: Buffer,
): Promise<TailWindow> {
  const size = await fileSystem.size(fd);
  const offset = Math.max(0, size - windowBytes);
  const length = size - offset;
  const buffer = length <= spare.length ? spare.subarray(0, length) : Buffer.allocUnsafe(length);
  const read = await readFully(fileSystem, fd, buffer, offset);
  return { bytes: buffer.subarray(0, read), offset, atEnd: read === buffer.length };
}

async function readFully(
  fileSystem: FileSystem,
  fd: number,
  buffer: Buffer,
  position: number,
): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const read = await fileSystem.read(fd, buffer.subarray(filled), position + filled);
    if (read === 0) break;
    filled += read;
  }
  return filled;
}

/**
 * Damage in the lines the window holds before the checkpoint, or null. They were read anyway:
 * checking them — checksums and seq order, no parse, a few microseconds — means that damage
 * near the end of a file is seen even though the fold starts after it. Damage further back
 * stays unseen (docs/crash-safety.md). The line is counted from the first whole line's seq,
 * as a full scan counts it when nothing before the window was lost.
 */
function damageBefore(
  path: string,
  bytes: Buffer,
  offset: number,
  checkpoint: FoundCheckpoint,
): TailRead | null {
  if (cleanBefore(bytes, offset, checkpoint)) return null;
  const end = checkpoint.offset - offset;
  // The first whole line: the window's first byte starts one only at the file's start.
  let at = offset === 0 ? 0 : bytes.indexOf(0x0a) + 1;
  const lines: Buffer[] = [];
  while (at < end) {
    const newline = bytes.indexOf(0x0a, at);
    lines.push(bytes.subarray(at, newline));
    at = newline + 1;
  }
  const problems = lines.map((line) => checksumProblem(line));
  const seqs = lines.map((line, index) => (problems[index] === null ? writtenSeq(line) : null));
  // A line whose checksum matches but which does not begin as this version writes a record —
  // another writer's key order, a newer version, or no record at all — is decoded, as a full
  // scan would: its seq, or what is wrong with it (rare, so the cost does not matter).
  for (const [index, line] of lines.entries()) {
    if (problems[index] !== null || seqs[index] !== null) continue;
    const decoded = decodeLine(line);
    if (decoded.ok) seqs[index] = decoded.record.seq;
    else problems[index] = decoded.message;
  }
  // Lines are counted from the first whole line's seq; when that line is the bad one, from
  // the next one's, taking it for a changed record (it may have been added bytes: a full scan,
  // which saw the line before it, then counts one more).
  const firstSeq = seqs[0] ?? (seqs.length > 1 && seqs[1] != null ? seqs[1] - 1 : null);
  const base = firstSeq ?? checkpoint.seq - lines.length;
  for (let index = 0; index < lines.length; index++) {
    const line = base + 1 + index;
    const problem = problems[index];
    if (problem !== null && problem !== undefined) {
      // As the scan words it: a record following with the seq this line should have had means
      // bytes were added; any other seq, that this line was a record and was changed.
      const expected = index === 0 ? base : (seqs[index - 1] ?? Number.NaN) + 1;
      const following = index + 1 < lines.length ? seqs[index + 1] : checkpoint.seq;
      const reason =
        following === expected ? problem : `${problem}, yet a complete record follows it`;
      return failure(damaged(path, line, reason));
    }
    const seq = seqs[index];
    const expected = index === 0 ? seq : (seqs[index - 1] ?? Number.NaN) + 1;
    if (seq !== null && seq !== undefined && seq !== expected) {
      return failure(damaged(path, line, `seq ${seq} where ${expected} was expected`));
    }
  }
  const last = seqs.at(-1);
  if (last !== null && last !== undefined && last + 1 !== checkpoint.seq) {
    return failure(
      damaged(
        path,
        base + 1 + lines.length,
        `seq ${checkpoint.seq} where ${last + 1} was expected`,
      ),
    );
  }
  return null;
}

/**
 * Whether the lines before the checkpoint are as this version writes them, with nothing to
 * report: every checksum matches, every line begins with its seq, and the seqs run on without
 * a gap to the checkpoint's. That is what {@link damageBefore} finds almost always, checked
 * here in one pass over the bytes, with no view or array per line; anything else is left to
 * it, to name.
 */
function cleanBefore(bytes: Buffer, offset: number, checkpoint: FoundCheckpoint): boolean {
  const end = checkpoint.offset - offset;
  let at = offset === 0 ? 0 : bytes.indexOf(0x0a) + 1;
  let previous: number | null = null;
  while (at < end) {
    const newline = bytes.indexOf(0x0a, at);
    if (newline === -1 || newline >= end) return false;
    if (checksumProblemAt(bytes, at, newline) !== null) return false;
    const seq = writtenSeqAt(bytes, at, newline);
    if (seq === null || (previous !== null && seq !== previous + 1)) return false;
    previous = seq;
    at = newline + 1;
  }
  return previous === null || previous + 1 === checkpoint.seq;
}

function failure(result: ScanResult): TailRead {
  return tailRead(result, emptyTailState(), null);
}
