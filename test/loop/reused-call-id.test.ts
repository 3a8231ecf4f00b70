import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { reusedCallId } from '../../src/loop/reused-call-id.ts';
import type { LoopMessage, ToolDefinition } from '../../src/loop/types.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { Session } from '../../src/transcript/session.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { recordsOf } from './support/harness.ts';

/*
 * A call's idempotency key is derived from the run and its call id. A model that reuses a call
 * id would hand the new call the earlier call's key — a provider keeping keys would take a new
 * charge for a repeat of the old one — so the Loop runs no call of such a turn.
 */

const call = (callId: string): LoopMessage['content'][number] => ({
  type: 'tool-call',
  callId,
  toolName: 'charge',
  input: {},
});

test('reusedCallId: an id used by an earlier turn, or twice in the last one', () => {
  const first: LoopMessage = { role: 'assistant', content: [call('c1')] };
  const results: LoopMessage = {
    role: 'tool',
    content: [
      { type: 'tool-result', callId: 'c1', toolName: 'charge', output: 'ok', isError: false },
    ],
  };
  assert.equal(reusedCallId([first]), undefined);
  assert.equal(
    reusedCallId([first, results, { role: 'assistant', content: [call('c2')] }]),
    undefined,
  );
  assert.equal(reusedCallId([first, results, { role: 'assistant', content: [call('c1')] }]), 'c1');
  assert.equal(reusedCallId([{ role: 'assistant', content: [call('c3'), call('c3')] }]), 'c3');
});

test('a turn reusing an earlier call id is not run: the earlier key is never handed to a new call', async () => {
  const folder = await makeTempFolder('llm-agent-reused-');
  try {
    const path = join(folder, 'main.jsonl');
    const session = await Session.create(path, {
      agentId: 'main',
      agentType: 'main',
      label: 'main',
      model: 'm',
    });
    const keys: string[] = [];
    const charge: ToolDefinition<{ cents: number }> = {
      name: 'charge',
      description: 'Charges',
      inputSchema: z.object({ cents: z.number() }),
      idempotency: 'side-effect',
      execute: async ({ cents }, { idempotencyKey }) => {
        keys.push(`${idempotencyKey} ${cents}`);
        return 'charged';
      },
    };
    const model = new ScriptedModel([
      { calls: [{ id: 'call_0', name: 'charge', input: { cents: 100 } }] },
      { calls: [{ id: 'call_0', name: 'charge', input: { cents: 900 } }] },
      { text: 'done' },
    ]);
    const result = await new Loop({
      backends: [model.model],
      writer: session,
      tools: [charge],
    }).start('Charge twice.');
    await session.close();
    assert.equal(result.status, 'failed');
    assert.match(
      result.error ?? '',
      /tool call call_0 reuses the id of an earlier call, so no call of its turn was run/,
    );
    assert.equal(keys.length, 1, 'only the first charge ran');
    assert.match(keys[0] ?? '', / 100$/);
    const dispatches = (await recordsOf(path))
      .filter(isKnownRecord)
      .filter((record) => record.type === 'tool-dispatched');
    assert.equal(dispatches.length, 1, 'the second call was never dispatched');
  } finally {
    await removeFolder(folder);
  }
});
