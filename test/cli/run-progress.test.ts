import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressLine } from '../../src/cli/run-progress.ts';
import { createStyle } from '../../src/cli/terminal-style.ts';

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
