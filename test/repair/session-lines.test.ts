import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ForeignLine } from '../../src/repair/foreign-format.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';

/*
 * The lines of a session in memory are streamed as a file's are, made when a pass reaches
 * them: every pass sees exactly the lines a plain split of the bytes gives, and nothing of
 * them is held between passes.
 */

/** The lines as a plain split gives them (what sessionLines held before it streamed them). */
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

test('every pass over the lines sees the lines of a plain split', () => {
  for (const text of CASES) {
    const read = sessionLines(Buffer.from(text));
    const expected = plainLines(text, read.tornAt);
    assert.deepEqual([...read.lines], expected, `a pass: ${JSON.stringify(text)}`);
    assert.deepEqual([...read.lines], expected, `another pass: ${JSON.stringify(text)}`);
  }
});

test('torn and unterminated last lines are told apart as before', () => {
  assert.deepEqual({ tornAt: sessionLines(Buffer.from('{"a":1}\n{"torn')).tornAt }, { tornAt: 8 });
  const whole = sessionLines(Buffer.from('{"a":1}\n{"whole":true}'));
  assert.equal(whole.tornAt, null);
  assert.equal(whole.unterminated, true);
  assert.deepEqual([...whole.lines][1]?.value, { whole: true });
});

test('each pass makes the lines anew: nothing is kept between passes', () => {
  const { lines } = sessionLines(Buffer.from('{"a":1}\n{"b":2}\n'));
  assert.notEqual([...lines][0], [...lines][0]);
});

/** A full collection, so that what is measured is what is held. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a million tiny lines hold nothing once read: not a parsed line each, not a number each', () => {
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
  // Every line kept with its text and value would be over 100 MB; one number a line 8 MB.
  assert.ok(held < 4_000_000, `held ${Math.round(held / 1e6)} MB after reading every line`);
});
