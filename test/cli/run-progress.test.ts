import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressLine } from '../../src/render/run-progress.ts';
import { createStyle } from '../../src/render/terminal-style.ts';

const style = createStyle(false);

test('a provider warning gets a progress line with its words (streamText used to print them)', () => {
  assert.equal(
    progressLine('lead', { type: 'model-warning', message: 'unsupported: temperature' }, style),
    '[lead] model warning: unsupported: temperature',
  );
});

test('a retried model error says so; text deltas get no line of their own', () => {
  assert.equal(
    progressLine(
      'lead',
      { type: 'model-error', backend: 0, attempt: 1, message: 'HTTP 503: busy', willRetry: true },
      style,
    ),
    '[lead] model error (backend 1, attempt 1): HTTP 503: busy — retrying',
  );
  assert.equal(progressLine('lead', { type: 'text-delta', text: 'Hel' }, style), null);
});

test('progress lines show the model’s control characters escaped, and any depth of input cut', () => {
  const hostile = 'x\u001b]52;c;cHduZWQ=\u0007\u202e\r';
  assert.equal(
    progressLine(`id\u001b[2J`, { type: 'model-warning', message: hostile }, style),
    '[id\\x1b[2J] model warning: x\\x1b]52;c;cHduZWQ=\\x07\\u202e ', // the \r flattened like any whitespace
  );
  const depth = 100_000;
  const input = JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as never;
  assert.throws(() => JSON.stringify(input), RangeError, 'the fault: too deep to stringify');
  const line = progressLine(
    'lead',
    { type: 'tool-call-start', callId: 'c', toolName: `t\u009b2J`, input },
    style,
  );
  assert.equal(
    line,
    `[lead] → t\\x9b2J ${'['.repeat(16)}… (truncated: nested deeper than 16)${']'.repeat(16)}`,
  );
});
