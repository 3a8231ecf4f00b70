import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LoopEvent, RunHandle, RunResult } from '../../src/loop/types.ts';
import { followRun, progressLine } from '../../src/render/run-progress.ts';
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

/** A run handle that only replays `events` (all followRun reads of it). */
function replay(events: LoopEvent[]): RunHandle {
  return {
    async *[Symbol.asyncIterator]() {
      yield* events;
    },
  } as unknown as RunHandle;
}

function turns(final: string): LoopEvent[] {
  return [
    { type: 'text-delta', text: 'Let me look.' },
    { type: 'turn-end', turn: 1, finishReason: 'tool-calls' },
    { type: 'text-delta', text: final },
    { type: 'turn-end', turn: 2, finishReason: 'stop' },
    { type: 'run-end', result: { status: 'finished', text: final } as RunResult },
  ];
}

async function followed(events: LoopEvent[], finalAnswerShown: boolean): Promise<string> {
  let written = '';
  const stream = {
    write: (chunk: string) => {
      written += chunk;
      return true;
    },
  };
  await followRun('lead', replay(events), stream as never, style, { finalAnswerShown });
  return written;
}

test('on one screen the final answer is said once (stdout prints it), earlier turns still are', async () => {
  const shown = await followed(turns('The answer is 42.'), true);
  assert.match(shown, /\[lead\] says: Let me look\./);
  assert.doesNotMatch(shown, /says: The answer is 42\./);
  assert.match(shown, /\[lead\] finished/);
  // Without the flag (stdout piped elsewhere) the progress says it, as before.
  assert.match(await followed(turns('The answer is 42.'), false), /says: The answer is 42\./);
});
