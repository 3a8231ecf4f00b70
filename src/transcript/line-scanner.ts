import {
  type BadLine,
  classifyTail,
  damaged,
  type LineInfo,
  MAX_LINE_BYTES,
  MAX_TORN_BYTES,
  type ScanResult,
} from './classify-tail.ts';
import { decodeLine } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

/**
 * A good record and where it stands.
 *
 * @example
 * for (const { record, info } of scanner.take()) console.log(info.line, record.type);
 */
export interface ScannedRecord {
  record: TranscriptRecord | ForeignRecord;
  info: LineInfo;
}

/**
 * Where a scan starts: a line start, the seq expected there and its line number.
 *
 * @example
 * const start: ScanStart = { offset: checkpointOffset, seq: 120, line: 121 };
 */
export interface ScanStart {
  offset: number;
  seq: number;
  line: number;
}

/**
 * The decisions of a transcript scan, with no I/O: fed the file's bytes in order, in pieces of
 * any size, it checks every line (checksum, seq, fields), hands out the good records as they
 * complete and, at the end, classifies what it found — clean, a crash's torn tail, or damage
 * (docs/transcript-format.md §4). The bytes fed may be reused by the caller once `feed`
 * returns: a partial line is copied, a whole one is decoded where it lies.
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
  readonly #bad: BadLine[] = [];
  #badBytes = 0;
  #parts: Buffer[] = [];
  #partsLength = 0;
  #oversized = false;
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
   * Feed the next bytes of the file. Stops at the first failure; the records completed before
   * it are still handed out by {@link take}.
   */
  feed(bytes: Buffer): void {
    const length = bytes.length;
    let from = 0;
    while (from < length && this.#failure === null) {
      const newline = bytes.indexOf(0x0a, from);
      const end = newline === -1 ? length : newline;
      const piece = bytes.subarray(from, end);
      if (end === length) {
        // Part of a line: copied, for the caller may reuse the buffer.
        this.#addPart(Buffer.from(piece));
        return;
      }
      if (this.#partsLength === 0) {
        this.#handleLine(piece.length > MAX_LINE_BYTES ? null : piece, piece.length + 1, true);
      } else {
        this.#addPart(piece);
        const lineLength = this.#partsLength;
        this.#handleLine(this.#oversized ? null : this.#joined(), lineLength + 1, true);
      }
      this.#parts = [];
      this.#partsLength = 0;
      this.#oversized = false;
      from = end + 1;
    }
  }

  /** The good records completed since the last call, in file order. */
  take(): ScannedRecord[] {
    const ready = this.#ready;
    this.#ready = [];
    return ready;
  }

  /** The end of the file: classify what was found. Call once, after the last {@link feed}. */
  finish(): ScanResult {
    if (this.#failure === null && this.#partsLength > 0) {
      const lineLength = this.#partsLength;
      this.#handleLine(this.#oversized ? null : this.#joined(), lineLength, false);
    }
    if (this.#failure !== null) return this.#failure;
    if (this.#bad.length === 0) {
      return {
        ok: true,
        state: 'clean',
        records: this.#records,
        lastSeq: this.#expectedSeq - 1,
        validBytes: this.#validBytes,
      };
    }
    return classifyTail(this.#path, this.#bad, this.#badBytes, {
      records: this.#records,
      expectedSeq: this.#expectedSeq,
      validBytes: this.#validBytes,
    });
  }

  #addPart(piece: Buffer): void {
    if (!this.#oversized) {
      if (this.#partsLength + piece.length > MAX_LINE_BYTES) {
        this.#oversized = true;
        this.#parts = [];
      } else {
        this.#parts.push(piece);
      }
    }
    this.#partsLength += piece.length;
  }

  #joined(): Buffer {
    const parts = this.#parts;
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#partsLength);
  }

  #handleLine(bytes: Buffer | null, length: number, terminated: boolean): void {
    const info: LineInfo = { line: this.#lineNumber, offset: this.#lineStart, length };
    this.#lineNumber += 1;
    this.#lineStart += length;
    if (bytes === null) {
      this.#pushBad({ info, bytes, reason: 'the line is longer than any record', terminated });
      return;
    }
    const decoded = decodeLine(bytes);
    if (decoded.ok && terminated) {
      // A complete record is never a crash's leftovers: after bad lines, or out of seq, it
      // proves damage at once (without buffering the rest of the file to find out).
      if (this.#bad.length > 0) {
        const first = this.#bad[0] as BadLine;
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
    if (!decoded.ok && decoded.kind === 'newer-version') {
      this.#failure = {
        ok: false,
        reason: 'newer-version',
        detail: `${this.#path}:${info.line}: ${decoded.message}; upgrade llm-agent to read it`,
        line: info.line,
      };
      return;
    }
    if (!decoded.ok && decoded.kind !== 'checksum') {
      // Its checksum matched: this line is exactly as written, and no crash writes a bad one.
      this.#failure = damaged(this.#path, info.line, decoded.message);
      return;
    }
    const reason = decoded.ok ? 'the last line has no newline' : decoded.message;
    this.#pushBad({ info, bytes, reason, terminated });
  }

  #pushBad(line: BadLine): void {
    this.#badBytes += line.info.length;
    // The bytes may be a view of the caller's buffer, which it reuses: keep a copy.
    this.#bad.push(
      line.bytes !== null && this.#badBytes <= MAX_TORN_BYTES
        ? { ...line, bytes: Buffer.from(line.bytes) }
        : { ...line, bytes: null },
    );
  }
}
