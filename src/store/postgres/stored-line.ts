import { decodeLine } from '../../transcript/line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from '../../transcript/records.ts';

/**
 * One stored line checked as every reader of the store checks it: at the seq expected, ending
 * in a newline, its checksum and fields valid, and saying the seq it is stored at. `where`
 * names the record in the failure (`<database>#<run>: record <seq>`).
 *
 * @example
 * const checked = checkStoredLine(row.line, Number(row.seq), 0, `${path}: record 0`);
 * if (!checked.ok) console.error(checked.detail);
 */
export function checkStoredLine(
  bytes: Buffer,
  seq: number,
  expected: number,
  where: string,
): { ok: true; record: TranscriptRecord | ForeignRecord } | { ok: false; detail: string } {
  if (seq !== expected) {
    return { ok: false, detail: `${where}: seq ${seq} where ${expected} was expected` };
  }
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) {
    return { ok: false, detail: `${where}: the line has no newline` };
  }
  const decoded = decodeLine(bytes.subarray(0, bytes.length - 1));
  if (!decoded.ok) return { ok: false, detail: `${where}: ${decoded.message}` };
  if (decoded.record.seq !== seq) {
    return { ok: false, detail: `${where}: the line says seq ${decoded.record.seq}` };
  }
  return { ok: true, record: decoded.record };
}
