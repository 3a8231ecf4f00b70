import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeLine,
  encodeLine,
  encodeReadableLine,
  MAX_LINE_BYTES,
} from '../../src/transcript/line-codec.ts';
import { MAX_LINE_BYTES as SCANNER_LIMIT } from '../../src/transcript/classify-tail.ts';
import type { RecordBody } from '../../src/transcript/records.ts';

/*
 * What a writer encodes is what a reader reads: encodeReadableLine gives back exactly
 * encodeLine's line when the reader decodes it, and refuses — before anything is written —
 * a record the reader would refuse: a bad field, or a line longer than the readers' limit
 * (shown with a small limit; the real one is 256 MiB, and the scanner's limit is the same).
 */

const header = { v: 1, seq: 3, at: '2026-12-04T00:00:00.000Z' };
const message = (text: string): RecordBody => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'text', text }],
});

test('a readable record is encoded exactly as encodeLine does', () => {
  const line = encodeReadableLine(header, message('hello'));
  assert.deepEqual(line.bytes, encodeLine(header, message('hello')).bytes);
  assert.ok(decodeLine(line.bytes.subarray(0, line.bytes.length - 1)).ok);
});

test('a line longer than the readers read is refused, at the limit accepted', () => {
  const length = encodeLine(header, message('x'.repeat(100))).bytes.length - 1;
  assert.throws(
    () => encodeReadableLine(header, message('x'.repeat(100)), length - 1),
    new TypeError(
      `a reader would refuse this message record: its line of ${length} bytes is longer than any record (${length - 1})`,
    ),
  );
  assert.equal(
    encodeReadableLine(header, message('x'.repeat(100)), length).bytes.length - 1,
    length,
  );
  assert.equal(SCANNER_LIMIT, MAX_LINE_BYTES, 'the writers refuse what the scanner refuses');
});

test('a record with a field a reader refuses is refused, naming it', () => {
  assert.throws(
    () =>
      encodeReadableLine(header, {
        type: 'tool-settled',
        callId: 'call_1',
        status: 'maybe',
      } as unknown as RecordBody),
    (error: unknown) =>
      error instanceof TypeError &&
      error.message.startsWith('a reader would refuse this tool-settled record: ') &&
      error.message.includes('status'),
  );
});
