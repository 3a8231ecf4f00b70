import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import type { ReconcileAnswer, ToolDefinition } from '../../src/loop/types.ts';
import { planRevival } from '../../src/revival/plan-revival.ts';
import {
  parseAnswer,
  type Reconciliation,
  reconcileCalls,
} from '../../src/revival/reconcile-calls.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import type { RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { emptyTailState, foldTailState } from '../../src/transcript/tail-state.ts';
import { validateRecord } from '../../src/transcript/validate-record.ts';

/*
 * Asking reconciles, as untrusted code: whatever a reconcile does — lie about its answer's shape,
 * throw, hang past the deadline — the call falls back to the interrupted answer, and the
 * revival is never held longer than the deadline.
 */

const request = { callId: 'call-1', toolName: 'send', idempotencyKey: 'ik-1', input: { to: 'a' } };

function toolWith(reconcile: ToolDefinition<{ to: string }>['reconcile']): ToolDefinition<unknown> {
  const tool: ToolDefinition<{ to: string }> = {
    name: 'send',
    description: 'Sends',
    inputSchema: z.object({ to: z.string() }),
    idempotency: 'side-effect',
    execute: async () => 'sent',
    ...(reconcile === undefined ? {} : { reconcile }),
  };
  return tool as ToolDefinition<unknown>;
}

test('completed, did-not-happen and unknown answers are taken as they are', async () => {
  const answers: ReconcileAnswer[] = [
    { outcome: 'completed', output: { id: 7 } },
    { outcome: 'did-not-happen' },
    { outcome: 'unknown', detail: 'the mail server is down' },
  ];
  const got = [];
  for (const answer of answers) {
    const [one] = await reconcileCalls([request], { tools: [toolWith(async () => answer)] });
    got.push(one);
  }
  assert.deepEqual(
    got.map((one) => [one?.answer, one?.output, one?.detail]),
    [
      ['completed', { id: 7 }, undefined],
      ['did-not-happen', undefined, undefined],
      ['unknown', undefined, 'reconcile: the mail server is down'],
    ],
  );
});

test('a throwing, lying or unparseable reconcile is unknown, with why', async () => {
  const cases: [string, ToolDefinition<{ to: string }>['reconcile'], RegExp][] = [
    [
      'throws',
      async () => {
        throw new Error('boom');
      },
      /^reconcile threw: boom$/,
    ],
    [
      'throws at once',
      (() => {
        throw new Error('sync boom');
      }) as never,
      /^reconcile threw: sync boom$/,
    ],
    ['not an object', async () => 'yes' as never, /not an answer: "yes"/],
    ['an outcome that is not one', async () => ({ outcome: 'done' }) as never, /not an answer/],
    ['completed without output', async () => ({ outcome: 'completed' }) as never, /not an answer/],
    [
      'completed with a bad isError',
      async () => ({ outcome: 'completed', output: 1, isError: 'no' }) as never,
      /not an answer/,
    ],
  ];
  for (const [name, reconcile, detail] of cases) {
    const [one] = await reconcileCalls([request], { tools: [toolWith(reconcile)] });
    assert.equal(one?.answer, 'unknown', name);
    assert.match(one?.detail ?? '', detail, name);
  }
});

test('a hanging reconcile is abandoned at the deadline (its signal aborted), never later', async () => {
  // The fault: a reconcile that never answers, and ignores nothing but its signal.
  let aborted = false;
  const hanging = toolWith(
    (_input, { signal }) =>
      new Promise(() => {
        signal.addEventListener('abort', () => {
          aborted = true;
        });
      }),
  );
  const started = Date.now();
  const [one] = await reconcileCalls([request], {
    tools: [hanging],
    timeoutMs: 60_000,
    deadline: Date.now() + 150,
  });
  const took = Date.now() - started;
  assert.equal(one?.answer, 'unknown');
  assert.match(one?.detail ?? '', /no answer within \d+ ms/);
  assert.ok(aborted, 'the reconcile was told to stop');
  assert.ok(took < 5_000, `bounded by the deadline, not the timeout (took ${took} ms)`);
});

test('a call whose tool has no reconcile is not asked; input that no longer fits is not passed', async () => {
  const plain = { ...toolWith(undefined) };
  delete plain.reconcile;
  assert.deepEqual(await reconcileCalls([request], { tools: [plain] }), []);
  let called = false;
  const [one] = await reconcileCalls([{ ...request, input: { to: 3 } }], {
    tools: [
      toolWith(async () => {
        called = true;
        return { outcome: 'did-not-happen' };
      }),
    ],
  });
  assert.equal(called, false);
  assert.equal(one?.answer, 'unknown');
});

test('parseAnswer: anything else is unknown', () => {
  for (const value of [null, undefined, 3, [], { outcome: 'completed', output: undefined }]) {
    assert.equal(parseAnswer(value).answer, 'unknown', JSON.stringify(value));
  }
});

/** A transcript with one keyed dispatch in flight, folded. */
function inFlight(): { records: TranscriptRecord[]; state: ReturnType<typeof emptyTailState> } {
  const bodies: RecordBody[] = [
    { type: 'session-meta', agentId: 'main', agentType: 'main', label: 'main', model: 'm' },
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'send it' }] },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId: 'call-1', toolName: 'send', input: { to: 'a' } }],
    },
    {
      type: 'tool-dispatched',
      callId: 'call-1',
      toolName: 'send',
      inputDigest: 'sha256:00',
      idempotency: 'side-effect',
      idempotencyKey: 'ik-1',
    },
  ];
  return fold(bodies);
}

function fold(bodies: RecordBody[]): {
  records: TranscriptRecord[];
  state: ReturnType<typeof emptyTailState>;
} {
  let state = emptyTailState();
  const records = bodies.map((body, seq) => {
    const { record } = encodeLine({ v: 2, seq, at: '2026-01-01T00:00:00.000Z' }, body);
    state = foldTailState(state, record, 0);
    return record;
  });
  return { records, state };
}

test('an unknown answer is the interrupted text exactly, its answer recorded; a key that does not match is not used', () => {
  const { records, state } = inFlight();
  const base = { records, lastMessage: undefined, state, maxRevivals: 2 };
  const unknown: Reconciliation = {
    ...request,
    answer: 'unknown',
    detail: 'reconcile threw: boom',
  };
  const plan = planRevival({ ...base, reconciled: [unknown] });
  const part = plan.interruptedMessages[0]?.content[0];
  assert.ok(part?.type === 'tool-result');
  assert.equal(part.output, INTERRUPTED_MESSAGE);
  assert.deepEqual(plan.interruptedMessages[0]?.extras?.reconcile, {
    answer: 'unknown',
    detail: 'reconcile threw: boom',
  });
  assert.deepEqual(plan.envelope.interrupted, ['call-1']);
  assert.deepEqual(plan.settles[0], {
    type: 'tool-settled',
    callId: 'call-1',
    status: 'failed',
    reason: 'interrupted',
  });
  // An answer about another key (another run's call of the same id) is not this call's.
  const stranger: Reconciliation = { ...request, idempotencyKey: 'ik-2', answer: 'did-not-happen' };
  const other = planRevival({ ...base, reconciled: [stranger] });
  assert.equal(other.interruptedMessages[0]?.extras?.reconcile, undefined);
  assert.equal(other.envelope.reconciled, undefined);
});

test('a revive killed after its reconciled answer and before the settle is finished the same way', () => {
  const { records } = inFlight();
  const completed: Reconciliation = { ...request, answer: 'completed', output: 'sent #7' };
  const first = planRevival({
    records,
    lastMessage: undefined,
    state: inFlight().state,
    maxRevivals: 2,
    reconciled: [completed],
  });
  // Only the answer reached the file; the next revive asks nothing and finishes from it.
  const answer = first.interruptedMessages[0] as RecordBody;
  const { records: after, state } = fold([
    ...records.map(({ v: _v, seq: _s, at: _a, ...body }) => body as RecordBody),
    answer,
  ]);
  const second = planRevival({ records: after, lastMessage: undefined, state, maxRevivals: 2 });
  assert.deepEqual(second.interruptedMessages, []);
  assert.deepEqual(second.settles, first.settles);
  assert.deepEqual(second.envelope, first.envelope);
  assert.deepEqual(first.settles[0], {
    type: 'tool-settled',
    callId: 'call-1',
    status: 'completed',
    reason: 'reconciled',
  });
});

test('what a reconcile answered is format 2: a format-1 reader refuses it by name', () => {
  const { records } = inFlight();
  const dispatch = records[3] as TranscriptRecord;
  assert.equal(dispatch.v, 2);
  const refused = validateRecord(JSON.parse(JSON.stringify(dispatch)), 1);
  assert.ok(!refused.ok);
  assert.equal(refused.problem.message, "format version 2 is newer than this reader's 1");
});
