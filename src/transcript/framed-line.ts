import { decodeLine, LINE_END } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

/**
 * What {@link decodeFramedLine} found: the record, or in one line why the bytes are not the
 * record expected.
 *
 * @example
 * const framed: FramedLine = decodeFramedLine(bytes, 0);
 * if (!framed.ok) console.error(framed.detail);
 */
export type FramedLine =
  | { ok: true; record: TranscriptRecord | ForeignRecord }
  | { ok: false; detail: string };

/**
 * One whole line of the format, newline included, checked as every reader of stored lines
 * checks it: it ends in the newline, its checksum and fields are valid, and it says the seq
 * `expectedSeq`. The one reader of a single framed line — what the PostgreSQL store's reads,
 * tails and import decode each line with. Pure; never throws.
 *
 * @example
 * const framed = decodeFramedLine(Buffer.from(line), 7);
 * if (framed.ok) console.log(framed.record.type);
 * else console.error(`record 7: ${framed.detail}`); // e.g. 'the line says seq 9 where 7 was expected'
 */
export function decodeFramedLine(bytes: Uint8Array, expectedSeq: number): FramedLine {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== LINE_END) {
    return { ok: false, detail: 'the line has no newline' };
  }
  const decoded = decodeLine(bytes.subarray(0, bytes.length - 1));
  if (!decoded.ok) return { ok: false, detail: decoded.message };
  if (decoded.record.seq !== expectedSeq) {
    return {
      ok: false,
      detail: `the line says seq ${decoded.record.seq} where ${expectedSeq} was expected`,
    };
  }
  return { ok: true, record: decoded.record };
}
