import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statusJson, statusJsonPieces } from '../../src/render/format-status.ts';
import { serializeJson } from '../../src/render/json-text.ts';
import { type RunNode, stateOf } from '../../src/render/run-node.ts';
import { assessTail } from '../../src/revival/assess-tail.ts';
import { unreadableInspection } from '../../src/revival/inspect.ts';
import { emptyTailState } from '../../src/transcript/tail-state.ts';

/*
 * `status --json` to a pipe or a file writes its JSON in pieces, a tree at a time: the pieces
 * joined must be the text `JSON.stringify` makes of the whole — for no runs, for many trees
 * spread over many pieces, with hostile strings, and for a tree nested too deep for
 * `JSON.stringify` (written by the fallback).
 */

function node(path: string, children: RunNode[] = [], detail = 'cannot read'): RunNode {
  const inspection =
    children.length % 2 === 0
      ? unreadableInspection(path, 3, detail)
      : { path, bytes: 10, ...assessTail(emptyTailState(), { maxRevivals: 3, running: false }) };
  return { path, displayPath: path, state: stateOf(inspection), inspection, children };
}

function joined(roots: RunNode[], pieceChars?: number): { text: string; pieces: number } {
  const pieces = [...statusJsonPieces(roots, 3, pieceChars)];
  return { text: pieces.join(''), pieces: pieces.length };
}

test('no runs: the same text as JSON.stringify', () => {
  assert.equal(joined([]).text, JSON.stringify(statusJson([], 3)));
});

test('many trees over many pieces, hostile strings: the same text, cut between trees', () => {
  const roots = Array.from({ length: 300 }, (_, index) =>
    node(`run-${index}\u2028"\\</script>`, index % 3 === 0 ? [node(`child-${index}`)] : []),
  );
  const whole = JSON.stringify(statusJson(roots, 3));
  const small = joined(roots, 1_000);
  assert.equal(small.text, whole);
  assert.ok(small.pieces > 20, `${small.pieces} pieces`);
  assert.equal(joined(roots).pieces, 1, 'under the default size: one piece');
  assert.deepEqual(JSON.parse(small.text), statusJson(roots, 3));
});

test('a tree nested deeper than JSON.stringify can go: written by the fallback, still JSON', () => {
  let deep = node('leaf');
  for (let depth = 0; depth < 3_000; depth += 1) deep = node(`d${depth}`, [deep]);
  const whole = statusJson([node('first'), deep], 3);
  assert.throws(() => JSON.stringify(whole), RangeError, 'the fault is real');
  const { text } = joined([node('first'), deep]);
  let parsed: { runs: { children: unknown[] }[] } | undefined;
  assert.doesNotThrow(() => {
    parsed = JSON.parse(text);
  });
  assert.equal(parsed?.runs.length, 2);
  // The text JSON.stringify would make, could it go that deep.
  assert.equal(text, serializeJson(whole));
});
