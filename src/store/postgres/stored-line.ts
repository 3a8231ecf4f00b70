import { decodeFramedLine } from '../../transcript/framed-line.ts';
import type { ForeignRecord, TranscriptRecord } from '../../transcript/records.ts';

/**
 * One stored line checked as every reader of the store checks it: stored at the seq expected,
 * and the line itself as {@link decodeFramedLine} checks it at the seq it is stored at. `where`
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
  const framed = decodeFramedLine(bytes, seq);
  return framed.ok ? framed : { ok: false, detail: `${where}: ${framed.detail}` };
}
