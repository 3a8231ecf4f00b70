import { crc32 } from 'node:zlib';
import {
  type BadTail,
  classifyTail,
  damaged,
  findCompleteRecord,
  isAllZero,
  type LineInfo,
  MAX_LINE_BYTES,
  type ScanResult,
  type UnterminatedLine,
} from './classify-tail.ts';
import { decodeLine } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

/**
 * A good record and where it stands.
 *
 * @example
 * for await (const { record, info } of scanRecords(path)) console.log(info.line, record.type);
 */
export interface ScannedRecord {
  record: TranscriptRecord | ForeignRecord;
  info: LineInfo;
}

/**
 * Where a scan starts: a line start, the seq expected there and its line number.
 *
 * @example
 * const start: ScanStart = { offset: 40_960, seq: 120, line: 121 }; // just after a checkpoint
 * const scanner = new LineScanner(path, start);
 */
export interface ScanStart {
  offset: number;
  seq: number;
  line: number;
}

/**
 * A line is buffered up to this length; past it the scanner streams it: it keeps a running
 * checksum, the line's first bytes and its last 18 (where the `crc` member sits), never the
 * line. A terminated streamed line whose checksum matches is read again by the caller
 * ({@link LineScanner.pendingLine}); an unterminated one is classified from what was kept. So
 * a 200 MB torn last line costs this much memory, not 200 MB.
 *
 * @example
 * const streamed = lineBytes > STREAM_AFTER_BYTES;
 */
export const STREAM_AFTER_BYTES = 8 * 1024 * 1024;

/** `,"crc":"` + 8 hex digits + `"}`: the bytes a streamed line's checksum is checked against. */
const SUFFIX_BYTES = 18;
const CRC_PREFIX = Buffer.from(',"crc":"');
const CLOSING_BRACE = Buffer.from('}');
const HEAD_BYTES = 64;

/** What is kept of a line being streamed (see {@link STREAM_AFTER_BYTES}). */
interface Streamed {
  /** CRC-32 of the line's bytes but its last {@link SUFFIX_BYTES}. */
  crc: number;
  /** The last bytes seen, at most {@link SUFFIX_BYTES}. */
  lag: Buffer;
  head: Buffer;
  /** A good record found in the buffered part (its start), looked for when streaming began. */
  hidden: number | null;
  allZero: boolean;
}

/**
 * The decisions of a transcript scan, with no I/O: fed the file's bytes in order, in pieces of
 * any size, it checks every line (checksum, seq, fields), hands out the good records as they
 * complete and, at the end, classifies what it found — clean, a crash's torn tail, or damage
 * (docs/transcript-format.md §4). The bytes fed may be reused by the caller once `feed`
 * returns: a partial line is copied, a whole one is decoded where it lies. Its memory is the
 * longest good record (a line over {@link STREAM_AFTER_BYTES} is streamed, and read again only
 * when its checksum matches) plus counters: bad lines are counted, never kept.
 *
 * `scanRecords` is the thin I/O shell around it; a reader that already holds the bytes (the
 * tail read of `inspect`) feeds them directly, without a promise per record.
 *
 * @example
 * const scanner = new LineScanner('run.jsonl');
 * scanner.feed(bytes);
 * for (const { record } of scanner.take()) console.log(record.seq);
 * const result = scanner.finish();
 */
export class LineScanner {
  readonly #path: string;
  #lineNumber: number;
  #expectedSeq: number;
  #validBytes: number;
  #lineStart: number;
  #records = 0;
  #bad: Omit<BadTail, 'last'> | null = null;
  #last: UnterminatedLine | null = null;
  #parts: Buffer[] = [];
  #partsLength = 0;
  #streamed: Streamed | null = null;
  #pending: LineInfo | null = null;
  #failure: ScanResult | null = null;
  #ready: ScannedRecord[] = [];

  constructor(path: string, start?: ScanStart) {
    this.#path = path;
    this.#lineNumber = start?.line ?? 1;
    this.#expectedSeq = start?.seq ?? 0;
    this.#validBytes = start?.offset ?? 0;
    this.#lineStart = start?.offset ?? 0;
  }

  /** The failure that ended the scan, once one is found: nothing fed after it counts. */
  get failure(): ScanResult | null {
    return this.#failure;
  }

  /**
   * A streamed line whose checksum matched: the caller reads its bytes again (`offset`,
   * `length` without the newline) and hands them to {@link supplyLine} before feeding more.
   */
  get pendingLine(): { offset: number; length: number } | null {
    const pending = this.#pending;
    return pending === null ? null : { offset: pending.offset, length: pending.length - 1 };
  }

  /**
   * Feed the next bytes of the file; returns how many were taken — all of them, unless a
   * streamed line must be read again first ({@link pendingLine}): then the caller supplies it
   * and feeds the rest. Stops at the first failure; the records completed before it are
   * still handed out by {@link take}.
   */
  feed(bytes: Buffer): number {
    const length = bytes.length;
    let from = 0;
    while (from < length && this.#failure === null && this.#pending === null) {
      const newline = bytes.indexOf(0x0a, from);
      const end = newline === -1 ? length : newline;
      const piece = bytes.subarray(from, end);
      if (end === length) {
        this.#addPart(piece);
        return length;
      }
      if (this.#partsLength === 0) {
        this.#handleLine(piece, piece.length + 1, true);
      } else {
        this.#addPart(piece);
        const lineLength = this.#partsLength;
        if (this.#streamed === null) this.#handleLine(this.#joined(), lineLength + 1, true);
        else this.#endStreamed(lineLength + 1);
      }
      this.#parts = [];
      this.#partsLength = 0;
      this.#streamed = null;
      from = end + 1;
    }
    return from;
  }

  /** The bytes of the {@link pendingLine}, read again (without the newline). */
  supplyLine(bytes: Buffer): void {
    const pending = this.#pending;
    if (pending === null) throw new Error('LineScanner.supplyLine: no line is pending');
    this.#pending = null;
    this.#lineNumber = pending.line;
    this.#lineStart = pending.offset;
    this.#handleLine(bytes.length === pending.length - 1 ? bytes : null, pending.length, true);
  }

  /** The good records completed since the last call, in file order. */
  take(): ScannedRecord[] {
    const ready = this.#ready;
    this.#ready = [];
    return ready;
  }

  /** The end of the file: classify what was found. Call once, after the last {@link feed}. */
  finish(): ScanResult {
    if (this.#failure === null && this.#partsLength > 0) this.#endUnterminated();
    if (this.#failure !== null) return this.#failure;
    if (this.#bad === null) {
      return {
        ok: true,
        state: 'clean',
        records: this.#records,
        lastSeq: this.#expectedSeq - 1,
        validBytes: this.#validBytes,
      };
    }
    return classifyTail(
      this.#path,
      { ...this.#bad, last: this.#last },
      { records: this.#records, expectedSeq: this.#expectedSeq, validBytes: this.#validBytes },
    );
  }

  /** Part of a line: copied while buffered, for the caller may reuse the buffer; else streamed. */
  #addPart(piece: Buffer): void {
    if (this.#streamed !== null) {
      this.#stream(piece);
    } else if (this.#partsLength + piece.length > STREAM_AFTER_BYTES) {
      this.#startStreaming(piece);
    } else {
      this.#parts.push(Buffer.from(piece));
    }
    this.#partsLength += piece.length;
  }

  #joined(): Buffer {
    const parts = this.#parts;
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#partsLength);
  }

  #startStreaming(piece: Buffer): void {
    const buffered = this.#joined();
    const keep = Math.max(0, buffered.length - SUFFIX_BYTES);
    this.#streamed = {
      crc: crc32(buffered.subarray(0, keep)),
      lag: Buffer.from(buffered.subarray(keep)),
      head: Buffer.from(buffered.subarray(0, HEAD_BYTES)),
      // Looked for in the buffered bytes only: a record hidden further into a line this long
      // goes unseen (docs/transcript-format.md §4).
      hidden: findCompleteRecord(buffered, this.#expectedSeq),
      allZero: isAllZero(buffered),
    };
    this.#parts = [];
    this.#stream(piece);
  }

  #stream(piece: Buffer): void {
    const streamed = this.#streamed as Streamed;
    if (streamed.allZero && !isAllZero(piece)) streamed.allZero = false;
    if (streamed.head.length < HEAD_BYTES) {
      streamed.head = Buffer.concat([
        streamed.head,
        piece.subarray(0, HEAD_BYTES - streamed.head.length),
      ]);
    }
    const all = streamed.lag.length + piece.length;
    const keep = Math.max(0, all - SUFFIX_BYTES);
    // The bytes leaving the lag window join the checksum: first the lag's, then the piece's.
    const fromLag = Math.min(keep, streamed.lag.length);
    streamed.crc = crc32(streamed.lag.subarray(0, fromLag), streamed.crc);
    streamed.crc = crc32(piece.subarray(0, keep - fromLag), streamed.crc);
    streamed.lag = Buffer.concat([streamed.lag.subarray(fromLag), piece.subarray(keep - fromLag)]);
  }

  /** Whether the streamed line's checksum matches: its `crc` member against the running CRC. */
  #streamedChecksum(): string | null {
    const streamed = this.#streamed as Streamed;
    const lag = streamed.lag;
    if (lag.length < SUFFIX_BYTES || !lag.subarray(0, CRC_PREFIX.length).equals(CRC_PREFIX)) {
      return 'the line has no checksum';
    }
    if (lag[SUFFIX_BYTES - 2] !== 0x22 || lag[SUFFIX_BYTES - 1] !== 0x7d) {
      return 'the line has no checksum';
    }
    const stored = lag.toString('latin1', CRC_PREFIX.length, CRC_PREFIX.length + 8);
    if (!/^[0-9a-f]{8}$/.test(stored)) return 'the checksum is not 8 hex digits';
    if (crc32(CLOSING_BRACE, streamed.crc) !== Number.parseInt(stored, 16)) {
      return 'the checksum does not match the line';
    }
    return null;
  }

  /** A streamed line ended in a newline (`length` includes it). */
  #endStreamed(length: number): void {
    const info: LineInfo = { line: this.#lineNumber, offset: this.#lineStart, length };
    const streamed = this.#streamed as Streamed;
    const problem =
      length - 1 > MAX_LINE_BYTES ? 'the line is longer than any record' : this.#streamedChecksum();
    if (problem === null) {
      // A good checksum: the line is exactly as written, and must be decoded — from its bytes,
      // which the caller reads again.
      this.#pending = info;
      this.#lineNumber += 1;
      this.#lineStart += length;
      return;
    }
    this.#lineNumber += 1;
    this.#lineStart += length;
    this.#noteBad(info, problem, streamed.head, streamed.allZero, true);
  }

  /** The file ended inside a line: it is bad (a good record ends in a newline) — or torn. */
  #endUnterminated(): void {
    const length = this.#partsLength;
    const info: LineInfo = { line: this.#lineNumber, offset: this.#lineStart, length };
    this.#lineNumber += 1;
    this.#lineStart += length;
    const streamed = this.#streamed;
    if (streamed === null) {
      const bytes = this.#joined();
      const decoded = decodeLine(bytes);
      if (!decoded.ok && decoded.kind === 'newer-version') {
        this.#failure = this.#newerVersion(info, decoded.message);
        return;
      }
      const reason = decoded.ok
        ? 'the last line has no newline'
        : decoded.kind === 'checksum'
          ? decoded.message
          : `${decoded.message} (the last line has no newline)`;
      this.#noteBad(info, reason, bytes.subarray(0, HEAD_BYTES), isAllZero(bytes), false);
      this.#last = { bytes };
      return;
    }
    const problem =
      length > MAX_LINE_BYTES ? 'the line is longer than any record' : this.#streamedChecksum();
    let complete: 'next' | 'other' | null = null;
    if (problem === null) {
      // Not decoded (that would take the whole line): its seq is read from its first bytes.
      const seq = /^\{"v":1,"seq":(\d{1,16}),/.exec(streamed.head.toString('latin1'))?.[1];
      complete = seq !== undefined && Number(seq) === this.#expectedSeq ? 'next' : 'other';
    }
    this.#noteBad(
      info,
      problem ?? 'the last line has no newline',
      streamed.head,
      streamed.allZero,
      false,
    );
    this.#last = { streamed: { complete, hidden: streamed.hidden } };
  }

  #newerVersion(info: LineInfo, message: string): ScanResult {
    return {
      ok: false,
      reason: 'newer-version',
      detail: `${this.#path}:${info.line}: ${message}; upgrade llm-agent to read it`,
      line: info.line,
    };
  }

  /** A whole line, newline included in `length`; `bytes` null when it is too long to hold. */
  #handleLine(bytes: Buffer | null, length: number, terminated: boolean): void {
    const info: LineInfo = { line: this.#lineNumber, offset: this.#lineStart, length };
    this.#lineNumber += 1;
    this.#lineStart += length;
    if (bytes === null || bytes.length > MAX_LINE_BYTES) {
      const reason =
        bytes === null
          ? 'the line changed while it was read'
          : 'the line is longer than any record';
      this.#noteBad(info, reason, Buffer.alloc(0), false, terminated);
      return;
    }
    const decoded = decodeLine(bytes);
    if (decoded.ok) {
      // A complete record is never a crash's leftovers: after bad lines, or out of seq, it
      // proves damage at once (without reading the rest of the file to find out).
      if (this.#bad !== null) {
        const first = this.#bad.first;
        const reason =
          decoded.record.seq === this.#expectedSeq
            ? first.reason
            : `${first.reason}, yet a complete record follows it`;
        this.#failure = damaged(this.#path, first.info.line, reason);
        return;
      }
      if (decoded.record.seq !== this.#expectedSeq) {
        this.#failure = damaged(
          this.#path,
          info.line,
          `seq ${decoded.record.seq} where ${this.#expectedSeq} was expected`,
        );
        return;
      }
      this.#expectedSeq += 1;
      this.#records += 1;
      this.#validBytes = this.#lineStart;
      this.#ready.push({ record: decoded.record, info });
      return;
    }
    if (decoded.kind === 'newer-version') {
      this.#failure = this.#newerVersion(info, decoded.message);
      return;
    }
    if (decoded.kind !== 'checksum') {
      // Its checksum matched: this line is exactly as written, and no crash writes a bad one.
      this.#failure = damaged(this.#path, info.line, decoded.message);
      return;
    }
    this.#noteBad(
      info,
      decoded.message,
      bytes.subarray(0, HEAD_BYTES),
      isAllZero(bytes),
      terminated,
    );
  }

  /** Count a bad line; only the first one's place, reason and first bytes are kept. */
  #noteBad(
    info: LineInfo,
    reason: string,
    head: Buffer,
    allZero: boolean,
    terminated: boolean,
  ): void {
    if (this.#bad === null) {
      this.#bad = {
        // A copy: the bytes may be a view of the caller's buffer, which it reuses.
        first: { info, reason, head: Buffer.from(head) },
        lines: 0,
        terminated: 0,
        bytes: 0,
        allZero: true,
      };
    }
    const bad = this.#bad;
    bad.lines += 1;
    if (terminated) bad.terminated += 1;
    bad.bytes += info.length;
    // A newline is not a zero byte.
    if (!allZero || terminated) bad.allZero = false;
  }
}
