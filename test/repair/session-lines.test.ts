import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ForeignLine } from '../../src/repair/foreign-format.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';

/*
 * The lines of a session are made when they are read: whatever reads them — by index, by
 * iteration, by an array method — sees exactly the lines a plain split of the bytes gives,
 * and nothing can change them.
 */

/** The lines as a plain split gives them (what sessionLines held before it made them lazily). */
function plainLines(text: string, tornAt: number | null): ForeignLine[] {
  const data = Buffer.from(text);
  const body = tornAt === null ? data : data.subarray(0, tornAt);
  const parts = body.toString('utf8').split('\n');
  if (body.length > 0 && body.at(-1) === 0x0a) parts.pop();
  if (body.length === 0) return [];
  return parts.map((part, index) => {
    let value: unknown;
    try {
      value = JSON.parse(part);
    } catch {
      value = undefined;
    }
    return { number: index + 1, text: part, value };
  });
}

const CASES = [
  '',
  '\n',
  '{"a":1}\n',
  '{"a":1}\n{"b":2}\n',
  '{"a":1}\n\nnot json\n{"c":"\u2028é"}\n',
  '{"a":1}\n{"torn',
  '{"a":1}\n{"whole":true}',
  '{"only":"unterminated"}',
  'torn only',
  '\n\n\n',
];

test('every way of reading the lines sees the lines of a plain split', () => {
  for (const text of CASES) {
    const read = sessionLines(Buffer.from(text));
    const expected = plainLines(text, read.tornAt);
    const { lines } = read;
    assert.equal(lines.length, expected.length, JSON.stringify(text));
    assert.deepEqual([...lines], expected, `iteration: ${JSON.stringify(text)}`);
    assert.deepEqual(
      expected.map((_, index) => lines[index]),
      expected,
      `by index: ${JSON.stringify(text)}`,
    );
    assert.deepEqual(lines.slice(1), expected.slice(1), `slice: ${JSON.stringify(text)}`);
    assert.deepEqual(
      lines.filter((line) => line.value === undefined),
      expected.filter((line) => line.value === undefined),
      `filter: ${JSON.stringify(text)}`,
    );
    assert.deepEqual(
      lines.find((line) => line.value !== undefined),
      expected.find((line) => line.value !== undefined),
    );
    assert.equal(lines[expected.length], undefined);
    assert.equal(expected.length in lines, false);
    if (expected.length > 0) assert.equal(0 in lines, true);
  }
});

test('torn and unterminated last lines are told apart as before', () => {
  assert.deepEqual({ tornAt: sessionLines(Buffer.from('{"a":1}\n{"torn')).tornAt }, { tornAt: 8 });
  const whole = sessionLines(Buffer.from('{"a":1}\n{"whole":true}'));
  assert.equal(whole.tornAt, null);
  assert.equal(whole.unterminated, true);
  assert.deepEqual(whole.lines[1]?.value, { whole: true });
});

test('the lines are made on each read, and cannot be changed', () => {
  const { lines } = sessionLines(Buffer.from('{"a":1}\n{"b":2}\n'));
  assert.notEqual(lines[0], lines[0], 'each read makes the line anew: nothing is kept');
  assert.throws(() => {
    (lines as ForeignLine[])[0] = { number: 9, text: '', value: undefined };
  }, TypeError);
  assert.throws(() => {
    (lines as ForeignLine[]).push({ number: 3, text: '', value: undefined });
  }, TypeError);
  assert.equal(lines.length, 2);
});

/** A full collection, so that what is measured is what is held. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a million tiny lines hold a number each, not a parsed line each', () => {
  const tiny = '{"type":"x"}\n';
  const data = Buffer.from(tiny.repeat(1_000_000));
  gc();
  const before = process.memoryUsage().heapUsed;
  const { lines } = sessionLines(data);
  let count = 0;
  for (const line of lines) if ((line.value as { type?: string }).type === 'x') count += 1;
  gc();
  const held = process.memoryUsage().heapUsed - before;
  assert.equal(count, 1_000_000);
  // Every line kept with its text and value would be over 100 MB; one number a line is 8 MB.
  assert.ok(held < 40_000_000, `held ${Math.round(held / 1e6)} MB after reading every line`);
  assert.equal(lines.length, 1_000_000);
});
