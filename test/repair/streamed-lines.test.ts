import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { ForeignLine } from '../../src/repair/foreign-format.ts';
import { type ReadAt, StreamedLines, sessionTail } from '../../src/repair/streamed-lines.ts';

/*
 * What `repair` plans from is read from the file in chunks, again for every pass: the lines
 * it gives must be the lines of the whole bytes split on `\n` (sessionLines), wherever the
 * chunks cut them — inside a line, at a newline, inside a multi-byte character — and a pass
 * that reads other bytes than the first must be noticed.
 */

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The whole bytes split on `\n`, as the lines and tail were read before they were streamed. */
function wholeSplit(bytes: Buffer): {
  lines: ForeignLine[];
  tornAt: number | null;
  unterminated: boolean;
} {
  const last = bytes.lastIndexOf(0x0a);
  let tornAt: number | null = last === bytes.length - 1 ? null : last + 1;
  let unterminated = false;
  if (tornAt !== null) {
    const value = parsed(bytes.toString('utf8', tornAt));
    if (typeof value === 'object' && value !== null) {
      tornAt = null;
      unterminated = true;
    }
  }
  const body = bytes.subarray(0, tornAt ?? bytes.length).toString('utf8');
  if (body === '') return { lines: [], tornAt, unterminated };
  const parts = body.split('\n');
  if (body.endsWith('\n')) parts.pop();
  const lines = parts.map((text, index) => ({ number: index + 1, text, value: parsed(text) }));
  return { lines, tornAt, unterminated };
}

const CASES = [
  '',
  '\n',
  '{"a":1}\n',
  '{"a":1}\n{"b":2}\n',
  '{"a":1}\n\nnot json\n{"c":"\u2028é€😀"}\n',
  '{"a":1}\n{"torn',
  '{"a":1}\n{"whole":true}',
  '{"only":"unterminated"}',
  'torn only',
  '\n\n\n',
  `{"long":"${'x'.repeat(1000)}é"}\n{"b":2}\n{"torn ${'y'.repeat(300)}`,
];

function reader(bytes: Buffer): ReadAt {
  return (buffer, position) => bytes.copy(buffer, 0, position, position + buffer.length);
}

test('streamed in chunks of any size, the lines and the tail are those of the whole bytes', () => {
  for (const text of CASES) {
    const bytes = Buffer.from(text);
    const whole = wholeSplit(bytes);
    for (const chunk of [1, 2, 3, 5, 7, 64, 1 << 20]) {
      const tail = sessionTail(reader(bytes), bytes.length, chunk);
      const label = `${JSON.stringify(text.slice(0, 40))} in chunks of ${chunk}`;
      assert.equal(tail.tornAt, whole.tornAt, `tornAt: ${label}`);
      assert.equal(tail.unterminated, whole.unterminated, `unterminated: ${label}`);
      if (whole.tornAt !== null) {
        const torn = createHash('sha256').update(bytes.subarray(whole.tornAt)).digest('hex');
        assert.equal(tail.tornDigest, torn, `the torn line's digest: ${label}`);
      }
      const lines = new StreamedLines(
        reader(bytes),
        bytes.length,
        tail.tornAt ?? bytes.length,
        chunk,
      );
      assert.deepEqual([...lines], whole.lines, `lines: ${label}`);
      assert.deepEqual([...lines], whole.lines, `a second pass: ${label}`);
      assert.equal(lines.changed, false, label);
      assert.equal(lines.settle(), createHash('sha256').update(bytes).digest('hex'), label);
    }
  }
});

test('a pass that reads other bytes than the first, or fewer, is noticed; a pass cut short is not compared', () => {
  const first = Buffer.from('{"a":1}\n{"b":2}\n');
  const other = Buffer.from('{"a":1}\n{"b":3}\n');
  let bytes = first;
  const lines = new StreamedLines(
    (buffer, at) => bytes.copy(buffer, 0, at, at + buffer.length),
    first.length,
    first.length,
    4,
  );
  for (const line of lines) {
    assert.equal(line.number, 1, 'a pass that stops at line 1');
    break;
  }
  assert.equal([...lines].length, 2);
  assert.equal(lines.changed, false);
  bytes = other;
  assert.equal([...lines].length, 2, 'the same number of lines…');
  assert.equal(lines.changed, true, '…but other bytes: changed');
  assert.equal(lines.settle(), null);

  bytes = first;
  const shortened = new StreamedLines(
    (buffer, at) => bytes.copy(buffer, 0, at, at + buffer.length),
    first.length,
    first.length,
    4,
  );
  bytes = first.subarray(0, 9);
  assert.equal([...shortened].length, 1, 'the file ended early');
  assert.equal(shortened.changed, true);
  assert.equal(shortened.settle(), null);
});
