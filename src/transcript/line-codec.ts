import { crc32 } from 'node:zlib';
import { checksumProblemAt } from './line-checksum.ts';
import type { ForeignRecord, RecordBody, RecordHeader, TranscriptRecord } from './records.ts';
import { describeError } from './transcript-error.ts';
import { type RecordProblem, validateRecord } from './validate-record.ts';

/*
 * A line is the record's JSON with a `crc` member last:
 *   {"v":1,"seq":0,"type":"…",…,"crc":"1a2b3c4d"}\n
 * The checksum is CRC-32 (IEEE, as zlib computes it) of the same bytes with the
 * `,"crc":"…"` member removed, written as 8 lower-case hex digits. Because the member has a
 * fixed width and is always last, a reader checks a line without parsing or re-serialising it.
 */

const CRC_SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const CRC_PREFIX = Buffer.from(',"crc":"');
const NEWLINE = 0x0a;

/**
 * An encoded line: the record as written and its bytes, newline included.
 *
 * @example
 * const body: MessageBody = { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] };
 * const { record, bytes } = encodeLine({ v: FORMAT_VERSION, seq: 0, at: new Date().toISOString() }, body);
 * await fileSystem.write(await fileSystem.open(path, 'append'), bytes); // record.seq === 0
 */
export interface EncodedLine {
  record: TranscriptRecord;
  bytes: Buffer;
}

/**
 * Serialise a record body under a header. Throws only for a programmer error: a body that
 * JSON cannot represent (a cycle, a BigInt) — before anything touches a file.
 *
 * @example
 * const body: MessageBody = { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] };
 * const line = encodeLine({ v: 1, seq: 0, at: '2026-01-01T00:00:00.000Z' }, body);
 * // line.bytes ends with `,"crc":"…"}\n`
 */
export function encodeLine(header: RecordHeader, body: RecordBody): EncodedLine {
  const { type, ...rest } = body;
  const record = { v: header.v, seq: header.seq, type, at: header.at } as Record<string, unknown>;
  if (header.tailRepair !== undefined) record.tailRepair = header.tailRepair;
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) record[key] = value;
  }
  const json = JSON.stringify(record);
  if (json === undefined || json.includes('\n')) {
    throw new TypeError('a record must serialise to one line of JSON');
  }
  const content = Buffer.from(json);
  const checksum = crc32(content).toString(16).padStart(8, '0');
  const bytes = Buffer.concat([
    content.subarray(0, content.length - 1),
    CRC_PREFIX,
    Buffer.from(checksum),
    Buffer.from('"}\n'),
  ]);
  return { record: record as unknown as TranscriptRecord, bytes };
}

/**
 * A line longer than this is bad without being buffered, so junk cannot exhaust memory; no
 * writer writes one.
 *
 * @example
 * const tooLong = bytes.length > MAX_LINE_BYTES; // a line this long is bad at once, never buffered
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * {@link encodeLine} for a writer: the line is decoded as a reader decodes it, and a record
 * the reader would refuse is not returned — a TypeError (a programmer error: the caller built
 * a bad body) whose message starts `a reader would refuse this TYPE record:`. What a writer
 * writes is always what its reader reads. `maxLineBytes` is the readers' limit; only a test
 * gives another.
 *
 * @example
 * const line = encodeReadableLine({ v: 1, seq: 0, at: new Date().toISOString() }, body);
 */
export function encodeReadableLine(
  header: RecordHeader,
  body: RecordBody,
  maxLineBytes: number = MAX_LINE_BYTES,
): EncodedLine {
  const line = encodeLine(header, body);
  if (line.bytes.length - 1 > maxLineBytes) {
    throw new TypeError(
      `a reader would refuse this ${body.type} record: its line of ${line.bytes.length - 1} bytes is longer than any record (${maxLineBytes})`,
    );
  }
  const read = decodeLine(line.bytes.subarray(0, line.bytes.length - 1));
  if (!read.ok) {
    throw new TypeError(`a reader would refuse this ${body.type} record: ${read.message}`);
  }
  return line;
}

/**
 * The outcome of decoding one line: the record, or what kind of wrong the line is (a
 * `checksum` failure may be a crash's torn tail; the others are damage).
 *
 * @example
 * const decoded: DecodeResult = decodeLine(bytes);
 * if (!decoded.ok && decoded.kind !== 'checksum') console.error(decoded.message);
 */
export type DecodeResult =
  | { ok: true; record: TranscriptRecord | ForeignRecord }
  | { ok: false; kind: 'checksum' | 'parse' | 'invalid' | 'newer-version'; message: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode one line (without its newline). Pure; never throws.
 *
 * @example
 * const result = decodeLine(bytes);
 * if (result.ok) console.log(result.record.type);
 */
export function decodeLine(line: Uint8Array): DecodeResult {
  const problem = checksumProblem(line);
  if (problem !== null) return { ok: false, kind: 'checksum', message: problem };
  const body = line.subarray(0, line.length - CRC_SUFFIX_LENGTH);
  // The record is the checksummed bytes themselves: the line without its `crc` member.
  let value: unknown;
  try {
    value = JSON.parse(`${decoder.decode(body)}}`);
  } catch (error) {
    return { ok: false, kind: 'parse', message: `not valid UTF-8 JSON (${describeError(error)})` };
  }
  const result = validateRecord(value);
  if (!result.ok) return problemResult(result.problem);
  return result;
}

/**
 * Why a line (without its newline) fails its checksum, or null when the checksum matches: the
 * check alone, without parsing — what a reader needs to tell whether bytes are exactly as
 * written. Pure; never throws.
 *
 * @example
 * if (checksumProblem(bytes) !== null) console.log('changed or torn since it was written');
 */
export function checksumProblem(line: Uint8Array): string | null {
  return checksumProblemAt(line, 0, line.length);
}

function problemResult(problem: RecordProblem): DecodeResult {
  const where = problem.field === '' ? '' : `field ${problem.field} `;
  return { ok: false, kind: problem.kind, message: `${where}${problem.message}`.trim() };
}

/**
 * The byte that ends every line.
 *
 * @example
 * const end = bytes.indexOf(LINE_END, from);
 */
export const LINE_END = NEWLINE;
