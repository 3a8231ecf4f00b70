import { describeError } from './transcript-error.ts';
import type { LineInfo, ScanResult } from './classify-tail.ts';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { LineScanner, type ScannedRecord, type ScanStart } from './line-scanner.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

export type { ScannedRecord, ScanStart } from './line-scanner.ts';
export {
  type LineInfo,
  MAX_LINE_BYTES,
  type ScanResult,
  type DamagedTail,
  type TornTail,
  type UnreadableReason,
} from './classify-tail.ts';

/**
 * Options for {@link scanTranscript} and {@link scanRecords}.
 *
 * @example
 * await scanTranscript(path, { onRecord: (record, info) => console.log(info.line, record.type) });
 */
export interface ScanOptions {
  fileSystem?: FileSystem;
  /** Called for every good record in order; not called for a torn tail. */
  onRecord?: (record: TranscriptRecord | ForeignRecord, info: LineInfo) => void;
  /** Start at this byte offset (a line start) with this expected seq; for tail reads. */
  start?: ScanStart;
  /** Read size; tests lower it to exercise line reassembly. */
  chunkBytes?: number;
  /**
   * Bytes the caller already read from `start.offset` (or 0): scanned first, without reading
   * them again. `atEnd` says they reach the end of the file as the caller saw it, so no read
   * follows them.
   */
  prefetched?: { bytes: Buffer; atEnd: boolean };
  /** A descriptor the caller opened for reading (and closes): the scan opens nothing. */
  fd?: number;
}

const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 4096;
const SLICE_BYTES = 4 * 1024;

/**
 * Read a transcript from start to end in constant memory (beyond the longest line), checking
 * every line's checksum, seq and fields, and classify what it finds. Never writes; never
 * throws (an I/O failure is `io-error`).
 *
 * A line whose checksum matches is exactly as written: if it is invalid, out of seq, or comes
 * after bad lines, that is damage. Only bytes after the last newline can be a torn tail (a
 * crash's unfinished line), unless they hold a complete record (something was lost in the
 * middle); a bad line that ends in a newline may be a durable record changed since, so it is
 * damage — salvageable when nothing good follows it (the result's `salvage`).
 * docs/transcript-format.md §4 has the rules in full.
 *
 * @example
 * let count = 0;
 * const result = await scanTranscript('run.jsonl', { onRecord: () => count++ });
 * if (!result.ok) console.error(result.detail);
 */
export async function scanTranscript(path: string, options: ScanOptions = {}): Promise<ScanResult> {
  const iterator = scanRecords(path, options);
  for (;;) {
    const step = await iterator.next();
    if (step.done === true) return step.value;
    options.onRecord?.(step.value.record, step.value.info);
  }
}

/**
 * {@link scanTranscript} as a stream: yields each good record as it is read (in constant
 * memory) and returns the classification when the file ends. Records of a file found damaged
 * further on have been yielded by then; the return value says so. Never throws.
 *
 * @example
 * const iterator = scanRecords('run.jsonl');
 * let step = await iterator.next();
 * for (; !step.done; step = await iterator.next()) console.log(step.value.record.seq);
 * if (!step.value.ok) console.error(step.value.detail); // the classification, at the end
 */
export async function* scanRecords(
  path: string,
  options: ScanOptions = {},
): AsyncGenerator<ScannedRecord, ScanResult, undefined> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  if (options.fd !== undefined) {
    try {
      return yield* scanOpen(fileSystem, options.fd, path, options);
    } catch (error) {
      return readFailure(path, error);
    }
  }
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'missing', detail: `${path}: no such file` };
    if (code === 'EISDIR')
      return { ok: false, reason: 'not-a-transcript', detail: `${path}: is a folder` };
    if (code === 'EFTYPE') {
      // Decided from fstat, before any read: a FIFO or a device is never read from.
      return { ok: false, reason: 'not-a-transcript', detail: (error as Error).message };
    }
    return {
      ok: false,
      reason: 'io-error',
      detail: `${path}: cannot open (${describeError(error)})`,
    };
  }
  try {
    return yield* scanOpen(fileSystem, fd, path, options);
  } catch (error) {
    return readFailure(path, error);
  } finally {
    try {
      await fileSystem.close(fd);
    } catch {
      // A failed close of a read-only descriptor loses nothing.
    }
  }
}

async function* scanOpen(
  fileSystem: FileSystem,
  fd: number,
  path: string,
  options: ScanOptions,
): AsyncGenerator<ScannedRecord, ScanResult, undefined> {
  const largestChunk = options.chunkBytes ?? CHUNK_BYTES;
  const scanner = new LineScanner(path, options.start);
  let position = options.start?.offset ?? 0;
  const prefetched = options.prefetched;
  if (prefetched !== undefined) {
    for (
      let at = yield* feedInSlices(scanner, prefetched.bytes, 0);
      scanner.pendingLine !== null;
      at = yield* feedInSlices(scanner, prefetched.bytes, at)
    ) {
      await supplyPending(scanner, fileSystem, fd);
      yield* scanner.take();
    }
    if (scanner.failure !== null || prefetched.atEnd) return scanner.finish();
    position += prefetched.bytes.length;
  }
  // Size the first read to the file (most transcripts are small, and a large buffer per peek
  // costs); a file that grows while it is read gets larger reads as it goes.
  const first =
    prefetched === undefined
      ? Math.max(MIN_CHUNK_BYTES, (await fileSystem.size(fd)) - position + 1)
      : MIN_CHUNK_BYTES;
  let chunk = Buffer.allocUnsafe(Math.min(largestChunk, first));
  for (;;) {
    const read = await fileSystem.read(fd, chunk, position);
    if (read === 0) break;
    position += read;
    // Feed only the bytes read: the rest of the chunk is stale, and searching it would cost a
    // whole chunk per read however small the file.
    const bytes = chunk.subarray(0, read);
    for (
      let at = yield* feedInSlices(scanner, bytes, 0);
      scanner.pendingLine !== null;
      at = yield* feedInSlices(scanner, bytes, at)
    ) {
      await supplyPending(scanner, fileSystem, fd);
      yield* scanner.take();
    }
    if (scanner.failure !== null) break;
    // The scanner copied what it keeps, so the buffer can be replaced by a larger one.
    if (read === chunk.length && chunk.length < largestChunk) {
      chunk = Buffer.allocUnsafe(Math.min(largestChunk, chunk.length * 2));
    }
  }
  return scanner.finish();
}

/**
 * Decoded records wait in the scanner until taken. Fed a whole 1 MiB read at once, a MiB of
 * parsed records is alive at every young-generation collection, and V8 grows that generation
 * by what keeps surviving (a 1 GiB scan peaked near 130 MiB). Fed 4 KiB at a time, the
 * consumer takes a few records at a time while they are young: `revive` of a 1 GiB transcript
 * peaked at 98 MiB with 16 KiB slices, 84 MiB with 4 KiB ones, at the same speed. A line the
 * scanner streamed rather than buffered, and whose checksum matched, is read again here.
 */
function* feedInSlices(
  scanner: LineScanner,
  bytes: Buffer,
  start: number,
): Generator<ScannedRecord, number> {
  let from = start;
  while (from < bytes.length && scanner.failure === null && scanner.pendingLine === null) {
    from += scanner.feed(bytes.subarray(from, Math.min(bytes.length, from + SLICE_BYTES)));
    yield* scanner.take();
  }
  return from;
}

/** Hand the scanner the line it streamed and must decode, read again from the file. */
async function supplyPending(scanner: LineScanner, fileSystem: FileSystem, fd: number) {
  const pending = scanner.pendingLine;
  if (pending === null) return;
  scanner.supplyLine(await readLine(fileSystem, fd, pending.offset, pending.length));
}

/** The bytes of one line, read again; shorter when the file shrank meanwhile. */
async function readLine(
  fileSystem: FileSystem,
  fd: number,
  offset: number,
  length: number,
): Promise<Buffer> {
  const line = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const read = await fileSystem.read(fd, line.subarray(filled), offset + filled);
    if (read === 0) break;
    filled += read;
  }
  return line.subarray(0, filled);
}

function readFailure(path: string, error: unknown): ScanResult {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') {
    return { ok: false, reason: 'not-a-transcript', detail: `${path}: is a folder` };
  }
  return {
    ok: false,
    reason: 'io-error',
    detail: `${path}: cannot read (${describeError(error)})`,
  };
}
