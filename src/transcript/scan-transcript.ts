import { crc32 } from 'node:zlib';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { decodeLine, LINE_END } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

/** Where a record stands in its file. */
export interface LineInfo {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte length of the line, newline included. */
  length: number;
}

/** What lies after the last good record when the file ends in a crash's leftovers. */
export interface TornTail {
  /** The byte length of the good prefix. */
  validBytes: number;
  /** How many bytes follow it. */
  tornBytes: number;
  /** The first line of the torn bytes. */
  line: number;
  /** Why those bytes are not a record. */
  reason: string;
}

/** Why a transcript cannot be read. */
export type UnreadableReason =
  | 'missing'
  | 'not-a-transcript'
  | 'damaged'
  | 'newer-version'
  | 'io-error';

/** The outcome of scanning a transcript. */
export type ScanResult =
  | {
      ok: true;
      /** `clean`: every byte belongs to a good record; `torn-tail`: a crash's leftovers follow. */
      state: 'clean' | 'torn-tail';
      records: number;
      /** The seq of the last good record, or -1 when there is none. */
      lastSeq: number;
      validBytes: number;
      torn?: TornTail;
    }
  | {
      ok: false;
      reason: UnreadableReason;
      /** One line a human can act on: file, line and cause. */
      detail: string;
      line?: number;
    };

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

/** A line longer than this is bad without being buffered, so junk cannot exhaust memory. */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;
/** More trailing bytes than one write could have left are damage, not a torn tail. */
const MAX_TORN_BYTES = MAX_LINE_BYTES + 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 4096;

interface BadLine {
  info: LineInfo;
  bytes: Buffer | null;
  reason: string;
  terminated: boolean;
}

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

function classifyTail(
  path: string,
  bad: BadLine[],
  badBytes: number,
  good: { records: number; expectedSeq: number; validBytes: number },
): ScanResult {
  const first = bad[0] as BadLine;
  if (badBytes > MAX_TORN_BYTES || bad.some((line) => line.bytes === null && line.terminated)) {
    return damaged(path, first.info.line, `${badBytes} bytes follow the last good record`);
  }
  const tail = Buffer.concat(
    bad.map((line) => {
      const bytes = line.bytes ?? Buffer.alloc(0);
      return line.terminated ? Buffer.concat([bytes, Buffer.from('\n')]) : bytes;
    }),
  );
  // One write leaves at most one line cut or garbled, then garbage: several whole lines that
  // look like records yet fail their checksums were written and later changed (bit rot, an
  // editor), which is damage.
  const framed = bad.filter(
    (line) => line.terminated && line.bytes !== null && looksFramed(line.bytes),
  );
  if (framed.length >= 2) {
    return damaged(
      path,
      first.info.line,
      `${first.reason}, and ${framed.length} whole lines fail their checksums`,
    );
  }
  const hidden = findCompleteRecord(tail, good.expectedSeq);
  if (hidden !== null) {
    // A complete record is not a crash's leftovers: at the start of the tail it is one that
    // fails validation or its seq (the line names why); further on, something was lost.
    const reason =
      hidden === 0 ? first.reason : `${first.reason}, yet a complete record follows it`;
    return damaged(path, first.info.line, reason);
  }
  if (good.validBytes === 0 && !looksLikeFirstRecordStart(tail)) {
    return {
      ok: false,
      reason: 'not-a-transcript',
      detail: `${path}:1: not a transcript (${first.reason})`,
      line: 1,
    };
  }
  return {
    ok: true,
    state: 'torn-tail',
    records: good.records,
    lastSeq: good.expectedSeq - 1,
    validBytes: good.validBytes,
    torn: {
      validBytes: good.validBytes,
      tornBytes: badBytes,
      line: first.info.line,
      reason: first.reason,
    },
  };
}

const RECORD_START = Buffer.from('{"v":');
const CRC_MEMBER = Buffer.from(',"crc":"');

/**
 * Find a record with a good checksum inside a torn tail. Such a record means the bytes are not
 * one interrupted write: something was lost in the middle, or a complete line is bad. The one
 * exception is the write of the next record that lost only its newline — the tail is that
 * record alone, unterminated, or followed by one byte that should have been its newline (a
 * torn sector holds garbage where the newline was to go) — which must then be a valid record
 * with the expected seq.
 */
function findCompleteRecord(tail: Buffer, expectedSeq: number): number | null {
  for (
    let start = tail.indexOf(RECORD_START);
    start !== -1;
    start = tail.indexOf(RECORD_START, start + 1)
  ) {
    // A record holds no newline: look for its end only up to the next one (which also keeps
    // a tail of many bad lines linear, not quadratic).
    const newline = tail.indexOf(LINE_END, start);
    const limit = newline === -1 ? tail.length : newline;
    for (
      let at = tail.indexOf(CRC_MEMBER, start);
      at !== -1 && at < limit;
      at = tail.indexOf(CRC_MEMBER, at + 1)
    ) {
      const end = at + CRC_MEMBER.length + 10;
      if (end > tail.length || tail[end - 1] !== 0x7d || tail[end - 2] !== 0x22) continue;
      const stored = tail.toString('latin1', at + CRC_MEMBER.length, end - 2);
      if (!/^[0-9a-f]{8}$/.test(stored)) continue;
      const computed = crc32(Buffer.from('}'), crc32(tail.subarray(start, at)));
      if (computed !== Number.parseInt(stored, 16)) continue;
      if (start === 0 && isNextRecordWithoutNewline(tail, end, expectedSeq)) continue;
      return start;
    }
  }
  return null;
}

/** A line shaped like a whole record: `{"v":` … `,"crc":"<8 bytes>"}`. */
function looksFramed(line: Buffer): boolean {
  if (line.length < RECORD_START.length + CRC_MEMBER.length + 10) return false;
  if (!line.subarray(0, RECORD_START.length).equals(RECORD_START)) return false;
  const at = line.length - CRC_MEMBER.length - 10;
  return (
    line.subarray(at, at + CRC_MEMBER.length).equals(CRC_MEMBER) &&
    line[line.length - 2] === 0x22 &&
    line[line.length - 1] === 0x7d
  );
}

function isNextRecordWithoutNewline(tail: Buffer, end: number, expectedSeq: number): boolean {
  // After the byte where the newline was to go, only zeros: a later append of the same batch
  // whose size reached the disk before its data (crashtest: torn-then-zeroed images).
  const lostNewline =
    end === tail.length ||
    (tail[end] !== LINE_END && tail.subarray(end + 1).every((byte) => byte === 0));
  if (!lostNewline) return false;
  const decoded = decodeLine(tail.subarray(0, end));
  return decoded.ok && decoded.record.seq === expectedSeq;
}

function looksLikeFirstRecordStart(tail: Buffer): boolean {
  const expected = Buffer.from('{"v":1,"seq":0,');
  const length = Math.min(expected.length, tail.length);
  if (tail.subarray(0, length).equals(expected.subarray(0, length))) return true;
  return tail.every((byte) => byte === 0);
}

function joined(parts: Buffer[], length: number): Buffer {
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
}

function damaged(path: string, line: number, reason: string): ScanResult {
  return { ok: false, reason: 'damaged', detail: `${path}:${line}: ${reason}`, line };
}

function describe(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return String(error);
}
