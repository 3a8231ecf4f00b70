import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Session } from '../../src/transcript/session.ts';
import { latch } from '../support/latch.ts';
import { recordsOf, shapeOf, withFreshSession } from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

test('abort while a tool runs: the tool gets the signal, no result or settle is invented, the dispatch stays open for revival', () =>
  withFreshSession(async (fixture) => {
    const { promise: running, release: started } = latch();
    let sawAbort = false;
    const wait: ToolDefinition<Record<string, never>> = {
      name: 'wait',
      description: 'Waits for its signal',
      inputSchema: z.object({}),
      idempotency: 'side-effect',
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener('abort', () => {
            sawAbort = true;
            reject(signal.reason);
          });
        }),
    };
    const quick: ToolDefinition<Record<string, never>> = {
      name: 'quick',
      description: 'Answers at once',
      inputSchema: z.object({}),
      idempotency: 'read-only',
      execute: async () => 'quick result',
    };
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'w', name: 'wait', input: {} },
          { id: 'q', name: 'quick', input: {} },
        ],
      },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [wait, quick],
    });
    const run = loop.start('Go');
    await running;
    for await (const event of run) {
      // Abort once the sibling has its answer, while `wait` is still running.
      if (event.type === 'tool-call-end' && event.callId === 'q') run.abort('user pressed stop');
    }
    const result = await run;
    assert.equal(result.status, 'aborted');
    assert.equal(sawAbort, true);
    const records = await recordsOf(fixture.path);
    const shape = shapeOf(records);
    assert.ok(shape.includes('tool-dispatched:w'));
    assert.ok(!shape.some((entry) => entry.includes('result:w') || entry === 'tool-settled:w'));
    // The sibling that finished keeps its result and settle.
    assert.ok(shape.includes('tool(tool-result:q)'));
    assert.ok(shape.includes('tool-settled:q'));
    assert.deepEqual(
      fixture.session.state.open.map((dispatch) => dispatch.callId),
      ['w'],
    );
    // A loop given this transcript without a revival refuses to guess.
    await fixture.session.close();
    const reopened = await Session.open(fixture.path);
    try {
      const again = await new Loop({
        backends: [new ScriptedModel([]).model],
        writer: reopened,
        tools: [wait, quick],
      }).run(
        records.flatMap((record) =>
          record.type === 'message'
            ? [{ role: record.role, content: record.content, seq: record.seq }]
            : [],
        ),
      );
      assert.equal(again.status, 'failed');
      assert.match(again.error ?? '', /w was dispatched and never settled/);
    } finally {
      await reopened.close();
    }
  }));

test('a tool that answers despite the abort has its answer recorded: it is the truth', () =>
  withFreshSession(async (fixture) => {
    const { promise: running, release: started } = latch();
    const stubborn: ToolDefinition<Record<string, never>> = {
      name: 'stubborn',
      description: 'Finishes its work',
      inputSchema: z.object({}),
      idempotency: 'side-effect',
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          started();
          signal.addEventListener('abort', () => resolve('finished anyway'));
        }),
    };
    const model = new ScriptedModel([{ calls: [{ id: 's', name: 'stubborn', input: {} }] }]);
    const loop = new Loop({ backends: [model.model], writer: fixture.session, tools: [stubborn] });
    const run = loop.start('Go');
    await running;
    run.abort();
    assert.equal((await run).status, 'aborted');
    const shape = shapeOf(await recordsOf(fixture.path));
    assert.deepEqual(shape.slice(-4), [
      'tool-dispatched:s',
      'tool(tool-result:s)',
      'tool-settled:s',
      'run-stopped',
    ]);
    assert.equal(model.prompts.length, 1, 'no model call after the abort');
  }));

test('abort while the model is thinking: only run-stopped after the user turn, the run stays revivable', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([{ hang: true }]);
    const loop = new Loop({ backends: [model.model], writer: fixture.session });
    const run = loop.start('Think hard');
    for await (const event of run) {
      if (event.type === 'turn-start') run.abort();
    }
    const result = await run;
    assert.equal(result.status, 'aborted');
    assert.equal(result.stopReason, 'aborted');
    const records = await recordsOf(fixture.path);
    assert.deepEqual(shapeOf(records), ['session-meta', 'user(text)', 'run-stopped']);
    const stopped = records.find((record) => record.type === 'run-stopped');
    assert.ok(stopped?.type === 'run-stopped');
    assert.equal(stopped.reason, 'The run was aborted.');
    assert.equal(fixture.session.state.lastMessage?.role, 'user');
    assert.equal(fixture.session.state.halt?.state, 'stopped');
  }));
