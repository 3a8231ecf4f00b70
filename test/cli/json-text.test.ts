import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { jsonText } from '../../src/cli/json-text.ts';

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
