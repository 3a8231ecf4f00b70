import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { jsonText, serializeJson } from '../../src/render/json-text.ts';
import { testSeed } from '../support/seeded-random.ts';

const value = { runs: [{ path: 'a.jsonl', state: 'finished' }] };

function stream(isTTY: boolean): NodeJS.WritableStream {
  const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  return Object.assign(sink, { isTTY });
}

test('--json is indented for a terminal and one line for a pipe, the same value either way', () => {
  const forTerminal = jsonText(value, stream(true));
  const forPipe = jsonText(value, stream(false));
  assert.equal(forTerminal, JSON.stringify(value, null, 2));
  assert.ok(forTerminal.includes('\n  '), 'indented');
  assert.equal(forPipe, JSON.stringify(value));
  assert.ok(!forPipe.includes('\n'), 'one line');
  assert.deepEqual(JSON.parse(forTerminal), JSON.parse(forPipe));
});

test('serializeJson writes the bytes JSON.stringify writes, one line and indented', () => {
  const seed = testSeed('serializeJson');
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(0, 2, 4), (data, indent) => {
      assert.equal(serializeJson(data, { indent }), JSON.stringify(data, null, indent));
    }),
    { seed, numRuns: 500 },
  );
  const odd = { a: undefined, b: [undefined, 1, -0], c: { d: {}, e: [] }, 'é\u2028"': 'x' };
  assert.equal(serializeJson(odd), JSON.stringify(odd));
  assert.equal(serializeJson(odd, { indent: 2 }), JSON.stringify(odd, null, 2));
});

test('--json of a value nested 100,000 levels deep is exact, where JSON.stringify overflows', () => {
  const depth = 100_000;
  const text = `{"input":${'['.repeat(depth)}"x"${']'.repeat(depth)}}`;
  const deep = JSON.parse(text) as unknown;
  assert.throws(() => JSON.stringify(deep), RangeError, 'the fault: JSON.stringify overflows');
  assert.equal(jsonText(deep, stream(false)), text);
  // Indenting 100,000 levels would take billions of spaces: one line on a terminal too.
  assert.equal(jsonText(deep, stream(true)), text);
});

test('serializeJson cuts containers deeper than maxDepth with a marker', () => {
  assert.equal(
    serializeJson({ a: [[1]], b: 2 }, { maxDepth: 2 }),
    '{"a":[… (truncated: nested deeper than 2)],"b":2}',
  );
  assert.equal(serializeJson([[]], { maxDepth: 1 }), '[… (truncated: nested deeper than 1)]');
  assert.equal(serializeJson('text', { maxDepth: 0 }), '"text"');
});
