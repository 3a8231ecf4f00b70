import { crc32 } from 'node:zlib';
import { decodeLine, LINE_END } from './line-codec.ts';

/*
 * The decision a scan ends with: what the bad lines at the end of a transcript are — a
 * crash's torn tail, or damage — and the shapes a scan answers with.
 */

/**
 * Where a record stands in its file.
 *
 * @example
 * const info: LineInfo = { line: 7, offset: 1893, length: 212 };
 */
export interface LineInfo {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte length of the line, newline included. */
  length: number;
}

/**
 * What lies after the last good record when the file ends in a crash's leftovers.
 *
 * @example
 * const torn: TornTail = {
 *   validBytes: 3439, tornBytes: 54, line: 14, reason: 'the line has no checksum',
 * };
 */
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

/**
 * Why a transcript cannot be read.
 *
 * @example
 * const reason: UnreadableReason = 'newer-version';
 */
export type UnreadableReason =
  | 'missing'
  | 'not-a-transcript'
  | 'damaged'
  | 'newer-version'
  | 'io-error';

/**
 * The outcome of scanning a transcript.
 *
 * @example
 * const result: ScanResult = await scanTranscript('runs/a.jsonl');
 * if (!result.ok) console.error(result.detail); // 'runs/a.jsonl:7: the line has no checksum'
 */
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

/**
 * A line longer than this is bad without being buffered, so junk cannot exhaust memory.
 *
 * @example
 * const tooLong = lineBytes > MAX_LINE_BYTES; // bad at once, never buffered
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;
/**
 * More trailing bytes than one write could have left are damage, not a torn tail.
 *
 * @example
 * const mayBeTorn = badBytes <= MAX_TORN_BYTES;
 */
export const MAX_TORN_BYTES = MAX_LINE_BYTES + 1024 * 1024;

/**
 * A line that is not a good record, kept until the file shows whether it is damage or a torn
 * tail.
 *
 * @example
 * const bad: BadLine = { info, bytes, reason: 'the line has no checksum', terminated: false };
 */
export interface BadLine {
  info: LineInfo;
  bytes: Buffer | null;
  reason: string;
  terminated: boolean;
}

/**
 * Classify the bad lines that end a file: a torn tail (a crash's leftovers, repairable) or
 * damage (refused with the line and the reason). Pure.
 *
 * @example
 * const result = classifyTail(path, bad, badBytes, { records, expectedSeq, validBytes });
 */
export function classifyTail(
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

/**
 * The answer for damage at a line.
 *
 * @example
 * damaged('runs/a.jsonl', 7, 'seq 9 where 6 was expected').detail;
 * // 'runs/a.jsonl:7: seq 9 where 6 was expected'
 */
export function damaged(path: string, line: number, reason: string): ScanResult {
  return { ok: false, reason: 'damaged', detail: `${path}:${line}: ${reason}`, line };
}
