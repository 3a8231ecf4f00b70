import { crc32 } from 'node:zlib';
import { decodeLine, LINE_END, MAX_LINE_BYTES } from './line-codec.ts';

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
  /**
   * The record type the torn bytes declare, when they begin as the next record would, up to
   * the end of its `type` member (`{"v":1,"seq":<next>,"type":"message"`); absent otherwise.
   */
  declaredType?: string;
}

/**
 * Whether bytes cut from the end of a transcript could hold (part of) a dispatch, so that the
 * calls of the last turn without a settle must count as dispatched. Only bytes that begin as
 * the next record, up to a complete `type` member naming another record type, cannot: a crash
 * that tore a message leaves those, while a durable dispatch cut short or flipped (its
 * newline, a byte, a truncation) still begins `"type":"tool-dispatched"` or less than that.
 *
 * @example
 * mayHoldDispatch(Buffer.from('{"v":1,"seq":7,"type":"message","at"'), 7); // false
 * mayHoldDispatch(Buffer.from('{"v":1,"seq":7,"ty'), 7); // true
 */
export function mayHoldDispatch(head: Buffer, expectedSeq: number): boolean {
  return typeMayDispatch(declaredType(head, expectedSeq));
}

/**
 * {@link mayHoldDispatch} from a {@link TornTail}'s `declaredType`.
 *
 * @example
 * typeMayDispatch(torn.declaredType); // true when it is absent
 */
export function typeMayDispatch(type: string | undefined): boolean {
  return type === undefined || !CANNOT_DISPATCH.has(type);
}

const CANNOT_DISPATCH = new Set([
  'session-meta',
  'message',
  'tool-settled',
  'compaction',
  'run-revived',
  'run-failed',
  'run-stopped',
  'checkpoint',
]);

function declaredType(head: Buffer, expectedSeq: number): string | undefined {
  const match = /^\{"v":1,"seq":(\d{1,16}),"type":"([a-z-]{1,32})"/.exec(head.toString('latin1'));
  if (match === null || Number(match[1]) !== expectedSeq) return undefined;
  return match[2];
}

/**
 * Damage that ends a file — bad lines after the last good record, with no good record after
 * them — which an explicit salvage may cut off into a sidecar (docs/transcript-format.md §6).
 *
 * @example
 * const salvage: DamagedTail = { validBytes: 3439, badBytes: 212, lines: 1 };
 */
export interface DamagedTail {
  /** The byte length of the good prefix. */
  validBytes: number;
  /** How many bytes follow it. */
  badBytes: number;
  /** How many of those bytes' lines end in a newline. */
  lines: number;
}

/**
 * Why a transcript cannot be read. A path naming something other than a regular file (a
 * folder, a FIFO, a device, a socket) is `not-a-transcript`, decided without reading from it.
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
 * const iterator = scanRecords('runs/a.jsonl');
 * let step = await iterator.next();
 * while (step.done !== true) step = await iterator.next();
 * const result: ScanResult = step.value;
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
      /** Damage at the very end that an explicit salvage may cut off (never set otherwise). */
      salvage?: DamagedTail;
    };

// The longest line a reader reads is the line format's (line-codec.ts), re-exported for the
// readers that import it from here.
export { MAX_LINE_BYTES };
/**
 * More trailing bytes than one write could have left are damage, not a torn tail.
 *
 * @example
 * const mayBeTorn = badBytes <= MAX_TORN_BYTES;
 */
export const MAX_TORN_BYTES = MAX_LINE_BYTES + 1024 * 1024;

/**
 * The unterminated last line of a file, when it is not a good record: its bytes when they
 * were kept, or — for a line longer than a scan buffers — what was learnt while streaming it.
 *
 * @example
 * const tail: UnterminatedLine = { bytes: Buffer.from('{"v":1,"se') };
 */
export type UnterminatedLine =
  | { bytes: Buffer }
  | {
      streamed: {
        /** The whole line is a record with a good checksum: the next one (`next`) or not. */
        complete: 'next' | 'other' | null;
        /** A good record was found inside the bytes that were looked at (its start offset). */
        hidden: number | null;
      };
    };

/**
 * What a scan found after the last good record: counters and the first bad line, never the
 * bad lines themselves (junk must not cost memory), plus the unterminated last line.
 *
 * @example
 * const findings: BadTail = { first, lines: 3, terminated: 2, bytes: 180, allZero: false, last: null };
 */
export interface BadTail {
  /** The first bad line, its reason and up to its first 16 bytes. */
  first: { info: LineInfo; reason: string; head: Buffer };
  /** Bad lines, the unterminated one included. */
  lines: number;
  /** Of those, the ones a newline ends. */
  terminated: number;
  /** Bytes after the last good record. */
  bytes: number;
  /** Whether every one of those bytes is zero (a file the size of which reached the disk first). */
  allZero: boolean;
  /** The unterminated last line, when there is one. */
  last: UnterminatedLine | null;
}

/**
 * Classify what follows the last good record (docs/transcript-format.md §4). Only the bytes
 * after the last newline can be a crash's torn tail (repairable): one write per line means a
 * crash leaves at most one unfinished line, and a newline-terminated line that fails its
 * checksum may be a durable record changed since (bit rot, an editor, an attacker) — the
 * package cannot tell, so it is damage, refused unless the caller explicitly salvages it. Pure.
 *
 * @example
 * const result = classifyTail(path, findings, { records, expectedSeq, validBytes });
 */
export function classifyTail(
  path: string,
  found: BadTail,
  good: { records: number; expectedSeq: number; validBytes: number },
): ScanResult {
  const first = found.first;
  const salvage: DamagedTail = {
    validBytes: good.validBytes,
    badBytes: found.bytes,
    lines: found.terminated,
  };
  const notTranscript =
    good.validBytes === 0 && !found.allZero && !looksLikeFirstRecordStart(first.head);
  if (notTranscript) {
    return {
      ok: false,
      reason: 'not-a-transcript',
      detail: `${path}:1: not a transcript (${first.reason})`,
      line: 1,
    };
  }
  if (found.terminated > 0) {
    const count =
      found.terminated === 1 ? 'it ends in a newline' : `${found.terminated} lines end in one`;
    return damagedTail(path, first.info.line, `${first.reason}; ${count}`, salvage);
  }
  if (found.bytes > MAX_TORN_BYTES) {
    return damagedTail(
      path,
      first.info.line,
      `${found.bytes} bytes follow the last good record`,
      salvage,
    );
  }
  const last = found.last;
  const hidden =
    last === null
      ? null
      : 'bytes' in last
        ? findCompleteRecord(last.bytes, good.expectedSeq)
        : last.streamed.complete === 'other'
          ? 0
          : last.streamed.hidden;
  if (hidden !== null) {
    // A complete record is not a crash's leftovers: at the start of the line it is one that
    // fails validation or its seq (the line names why); further on, something was lost.
    const reason =
      hidden === 0 ? first.reason : `${first.reason}, yet a complete record follows it`;
    return damagedTail(path, first.info.line, reason, salvage);
  }
  return {
    ok: true,
    state: 'torn-tail',
    records: good.records,
    lastSeq: good.expectedSeq - 1,
    validBytes: good.validBytes,
    torn: {
      validBytes: good.validBytes,
      tornBytes: found.bytes,
      line: first.info.line,
      reason: first.reason,
      ...(declaredType(first.head, good.expectedSeq) === undefined
        ? {}
        : { declaredType: declaredType(first.head, good.expectedSeq) as string }),
    },
  };
}

const RECORD_START = Buffer.from('{"v":');
const CRC_MEMBER = Buffer.from(',"crc":"');
/**
 * A torn line is searched for hidden records from this many candidate starts: a crash leaves
 * one (the line's own), a lost newline two; junk made of `{"v":` must not make the search
 * quadratic.
 */
const MAX_CANDIDATE_STARTS = 64;

/**
 * Find a record with a good checksum inside a torn line; its start, or null. Such a record
 * means the bytes are not one interrupted write: something was lost in the middle, or a
 * complete line is bad. The one exception is the write of the next record that lost only its
 * newline — the tail is that record alone, unterminated, or followed by one byte that should
 * have been its newline (a torn sector holds garbage where the newline was to go) — which must
 * then be a valid record with the expected seq.
 *
 * @example
 * findCompleteRecord(Buffer.from('{"v":1,"se'), 7); // null: a cut line hides nothing
 */
export function findCompleteRecord(tail: Buffer, expectedSeq: number): number | null {
  let starts = 0;
  for (
    let start = tail.indexOf(RECORD_START);
    start !== -1 && starts < MAX_CANDIDATE_STARTS;
    start = tail.indexOf(RECORD_START, start + 1), starts++
  ) {
    // A record holds no newline: look for its end only up to the next one.
    const newline = tail.indexOf(LINE_END, start);
    const limit = newline === -1 ? tail.length : newline;
    // The CRC from `start` grows member by member: linear in the line, whatever it holds.
    let crc = 0;
    let crcTo = start;
    for (
      let at = tail.indexOf(CRC_MEMBER, start);
      at !== -1 && at < limit;
      at = tail.indexOf(CRC_MEMBER, at + 1)
    ) {
      crc = crc32(tail.subarray(crcTo, at), crc);
      crcTo = at;
      const end = at + CRC_MEMBER.length + 10;
      if (end > tail.length || tail[end - 1] !== 0x7d || tail[end - 2] !== 0x22) continue;
      const stored = tail.toString('latin1', at + CRC_MEMBER.length, end - 2);
      if (!/^[0-9a-f]{8}$/.test(stored)) continue;
      if (crc32(CLOSING_BRACE, crc) !== Number.parseInt(stored, 16)) continue;
      if (start === 0 && isNextRecordWithoutNewline(tail, end, expectedSeq)) continue;
      return start;
    }
  }
  return null;
}

const CLOSING_BRACE = Buffer.from('}');

function isNextRecordWithoutNewline(tail: Buffer, end: number, expectedSeq: number): boolean {
  // After the byte where the newline was to go, only zeros: a later append of the same batch
  // whose size reached the disk before its data (crashtest: torn-then-zeroed images).
  const lostNewline =
    end === tail.length || (tail[end] !== LINE_END && isAllZero(tail.subarray(end + 1)));
  if (!lostNewline) return false;
  const decoded = decodeLine(tail.subarray(0, end));
  return decoded.ok && decoded.record.seq === expectedSeq;
}

const FIRST_RECORD_START = Buffer.from('{"v":1,"seq":0,');

function looksLikeFirstRecordStart(head: Buffer): boolean {
  const length = Math.min(FIRST_RECORD_START.length, head.length);
  return head.subarray(0, length).equals(FIRST_RECORD_START.subarray(0, length));
}

const ZEROS = Buffer.alloc(64 * 1024);

/**
 * Whether every byte is zero, compared a block at a time (no per-byte loop in JavaScript).
 *
 * @example
 * isAllZero(Buffer.alloc(10)); // true
 */
export function isAllZero(bytes: Uint8Array): boolean {
  for (let from = 0; from < bytes.length; from += ZEROS.length) {
    const end = Math.min(bytes.length, from + ZEROS.length);
    if (Buffer.compare(bytes.subarray(from, end), ZEROS.subarray(0, end - from)) !== 0) {
      return false;
    }
  }
  return true;
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

/**
 * The answer for damage that ends the file: it names the line, says why it is not taken for a
 * crash's leftovers, and how to salvage it; `salvage` lets a writer asked to do so cut it off.
 *
 * @example
 * damagedTail('runs/a.jsonl', 9, 'the checksum does not match the line', salvage).detail;
 */
export function damagedTail(
  path: string,
  line: number,
  reason: string,
  salvage: DamagedTail,
): ScanResult {
  return {
    ok: false,
    reason: 'damaged',
    detail: `${path}:${line}: ${reason} — it may be a durable record (bit rot, an edit), not a crash's torn tail; to salvage, revive with --salvage (library: salvageDamagedTail: true): its ${salvage.badBytes} bytes are kept in a sidecar and every call of the last turn without a result is answered as interrupted, never run again`,
    line,
    salvage,
  };
}
