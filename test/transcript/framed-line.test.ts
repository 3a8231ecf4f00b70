import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFramedLine } from '../../src/transcript/framed-line.ts';
import { encodeLine } from '../../src/transcript/line-codec.ts';

/*
 * The one reader of a single framed line (the PostgreSQL store's reads, tails and import use
 * it): a whole line at the seq expected reads; a line without its newline, a changed byte or
 * another seq is refused in one line saying which.
 */

const line = encodeLine(
  { v: 1, seq: 4, at: '2026-12-04T00:00:00.000Z' },
  { type: 'message', role: 'user', content: [{ type: 'text', text: 'hello' }] },
).bytes;

test('a whole line at the seq expected reads as its record', () => {
  const framed = decodeFramedLine(line, 4);
  assert.ok(framed.ok);
  assert.equal(framed.record.seq, 4);
  assert.equal(framed.record.type, 'message');
});

test('a line saying another seq is refused, naming both', () => {
  assert.deepEqual(decodeFramedLine(line, 5), {
    ok: false,
    detail: 'the line says seq 4 where 5 was expected',
  });
});

test('a line without its newline, or with a changed byte, is refused', () => {
  assert.deepEqual(decodeFramedLine(line.subarray(0, line.length - 1), 4), {
    ok: false,
    detail: 'the line has no newline',
  });
  assert.deepEqual(decodeFramedLine(Buffer.alloc(0), 4), {
    ok: false,
    detail: 'the line has no newline',
  });
  const changed = Buffer.from(line);
  changed[changed.indexOf('hello')] = 0x48; // 'h' → 'H'
  const framed = decodeFramedLine(changed, 4);
  assert.equal(framed.ok, false);
  assert.match(framed.ok ? '' : framed.detail, /checksum|crc/i);
});
