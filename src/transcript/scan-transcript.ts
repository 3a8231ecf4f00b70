import {
  type BadLine,
  classifyTail,
  damaged,
  type LineInfo,
  MAX_LINE_BYTES,
  MAX_TORN_BYTES,
  type ScanResult,
} from './classify-tail.ts';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { decodeLine } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

export {
  type LineInfo,
  MAX_LINE_BYTES,
  type ScanResult,
  type TornTail,
  type UnreadableReason,
} from './classify-tail.ts';

/** Options for {@link scanTranscript}. */
export interface ScanOptions {
  fileSystem?: FileSystem;
  /** Called for every good record in order; not called for a torn tail. */
  onRecord?: (record: TranscriptRecord | ForeignRecord, info: LineInfo) => void;
  /** Start at this byte offset (a line start) with this expected seq; for tail reads. */
  start?: { offset: number; seq: number; line: number };
  /** Read size; tests lower it to exercise line reassembly. */
  chunkBytes?: number;
}

const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 4096;

/**
 * Read a transcript from start to end in constant memory (beyond the longest line), checking
 * every line's checksum, seq and fields, and classify what it finds. Never writes; never
 * throws (an I/O failure is `io-error`).
 *
 * A line whose checksum matches is exactly as written: if it is invalid, out of seq, or comes
 * after bad lines, that is damage. Lines failing their checksums at the end are a torn tail,
 * unless they hold a complete record (something was lost in the middle) or several whole
 * record-shaped lines (changed after they were written). docs/transcript-format.md §4 has the
 * rules in full.
 *
 * @example
 * const result = await scanTranscript('run.jsonl', { onRecord: (record) => count++ });
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

/** A good record and where it stands. */
export interface ScannedRecord {
  record: TranscriptRecord | ForeignRecord;
  info: LineInfo;
}

/**
 * {@link scanTranscript} as a stream: yields each good record as it is read (in constant
 * memory) and returns the classification when the file ends. Records of a file found damaged
 * further on have been yielded by then; the return value says so. Never throws.
 *
 * @example
 * const iterator = scanRecords('run.jsonl');
 * for (let step = await iterator.next(); !step.done; step = await iterator.next()) use(step.value);
 */
export async function* scanRecords(
  path: string,
  options: ScanOptions = {},
): AsyncGenerator<ScannedRecord, ScanResult, undefined> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'missing', detail: `${path}: no such file` };
    if (code === 'EISDIR')
      return { ok: false, reason: 'not-a-transcript', detail: `${path}: is a folder` };
    return { ok: false, reason: 'io-error', detail: `${path}: cannot open (${describe(error)})` };
  }
  try {
    return yield* scanOpen(fileSystem, fd, path, options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR')
      return { ok: false, reason: 'not-a-transcript', detail: `${path}: is a folder` };
    return { ok: false, reason: 'io-error', detail: `${path}: cannot read (${describe(error)})` };
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
  // Size the first read to the file (most transcripts are small, and a large buffer per peek
  // costs); a file that grows while it is read gets larger reads as it goes.
  const size = await fileSystem.size(fd);
  const first = Math.max(MIN_CHUNK_BYTES, size - (options.start?.offset ?? 0) + 1);
  let chunk = Buffer.allocUnsafe(Math.min(largestChunk, first));
  let position = options.start?.offset ?? 0;
  let lineNumber = options.start?.line ?? 1;
  let expectedSeq = options.start?.seq ?? 0;
  let validBytes = position;
  let records = 0;
  const bad: BadLine[] = [];
  let badBytes = 0;
  let parts: Buffer[] = [];
  let partsLength = 0;
  let lineStart = position;
  let oversized = false;
  let failure: ScanResult | null = null;
  let ready: ScannedRecord[] = [];

  const handleLine = (bytes: Buffer | null, length: number, terminated: boolean): void => {
    const info: LineInfo = { line: lineNumber, offset: lineStart, length };
    lineNumber += 1;
    lineStart += length;
    if (failure !== null) return;
    if (bytes === null) {
      pushBad({ info, bytes, reason: 'the line is longer than any record', terminated });
      return;
    }
    const decoded = decodeLine(bytes);
    if (decoded.ok && terminated) {
      // A complete record is never a crash's leftovers: after bad lines, or out of seq, it
      // proves damage at once (without buffering the rest of the file to find out).
      if (bad.length > 0) {
        const first = bad[0] as BadLine;
        const reason =
          decoded.record.seq === expectedSeq
            ? first.reason
            : `${first.reason}, yet a complete record follows it`;
        failure = damaged(path, first.info.line, reason);
        return;
      }
      if (decoded.record.seq !== expectedSeq) {
        failure = damaged(
          path,
          info.line,
          `seq ${decoded.record.seq} where ${expectedSeq} was expected`,
        );
        return;
      }
      expectedSeq += 1;
      records += 1;
      validBytes = lineStart;
      ready.push({ record: decoded.record, info });
      return;
    }
    if (!decoded.ok && decoded.kind === 'newer-version') {
      failure = {
        ok: false,
        reason: 'newer-version',
        detail: `${path}:${info.line}: ${decoded.message}; upgrade llm-agent to read it`,
        line: info.line,
      };
      return;
    }
    if (!decoded.ok && decoded.kind !== 'checksum') {
      // Its checksum matched: this line is exactly as written, and no crash writes a bad one.
      failure = damaged(path, info.line, decoded.message);
      return;
    }
    const reason = decoded.ok ? 'the last line has no newline' : decoded.message;
    pushBad({ info, bytes, reason, terminated });
  };

  const pushBad = (line: BadLine): void => {
    badBytes += line.info.length;
    bad.push(line.bytes !== null && badBytes <= MAX_TORN_BYTES ? line : { ...line, bytes: null });
  };

  for (;;) {
    const read = await fileSystem.read(fd, chunk, position);
    if (read === 0) break;
    position += read;
    const grow = read === chunk.length && chunk.length < largestChunk;
    // Search only the bytes read: the rest of the chunk is stale, and searching it would cost
    // a whole chunk per read however small the file.
    const filled = chunk.subarray(0, read);
    let from = 0;
    while (from < read) {
      const newline = filled.indexOf(0x0a, from);
      const end = newline === -1 ? read : newline;
      const piece = filled.subarray(from, end);
      if (!oversized) {
        if (partsLength + piece.length > MAX_LINE_BYTES) {
          oversized = true;
          parts = [];
        } else {
          parts.push(Buffer.from(piece));
        }
      }
      partsLength += piece.length;
      if (end === read) break;
      handleLine(oversized ? null : joined(parts, partsLength), partsLength + 1, true);
      if (failure !== null) return failure;
      if (ready.length > 0) {
        yield* ready;
        ready = [];
      }
      parts = [];
      partsLength = 0;
      oversized = false;
      from = end + 1;
    }
    // Pieces were copied out, so the buffer can be replaced by a larger one for a large file.
    if (grow) chunk = Buffer.allocUnsafe(Math.min(largestChunk, chunk.length * 2));
  }
  if (partsLength > 0) {
    handleLine(oversized ? null : joined(parts, partsLength), partsLength, false);
  }
  if (failure !== null) return failure;
  yield* ready;
  if (bad.length === 0) {
    return { ok: true, state: 'clean', records, lastSeq: expectedSeq - 1, validBytes };
  }
  return classifyTail(path, bad, badBytes, { records, expectedSeq, validBytes });
}

function joined(parts: Buffer[], length: number): Buffer {
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
}

function describe(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return String(error);
}
