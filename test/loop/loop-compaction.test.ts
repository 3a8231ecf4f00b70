import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { COMPACTION_PREFIX, estimateTokens, planCompaction } from '../../src/loop/compaction.ts';
import { Loop } from '../../src/loop/loop.ts';
import type { LoopMessage } from '../../src/loop/types.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { TranscriptRecord } from '../../src/transcript/records.ts';
import { echoTool, recordsOf, withFreshSession } from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

/** Every call and its result lie on the same side of every compaction's range. */
function assertNoSplitPairs(records: readonly TranscriptRecord[]): number {
  const callSeq = new Map<string, number>();
  const resultSeq = new Map<string, number>();
  for (const record of records) {
    if (record.type !== 'message') continue;
    for (const part of record.content) {
      if (part.type === 'tool-call') callSeq.set(part.callId, record.seq);
      if (part.type === 'tool-result') resultSeq.set(part.callId, record.seq);
    }
  }
  let compactions = 0;
  for (const record of records) {
    if (record.type !== 'compaction') continue;
    compactions += 1;
    const inside = (seq: number) => seq >= record.fromSeq && seq <= record.toSeq;
    for (const [callId, seq] of callSeq) {
      const answer = resultSeq.get(callId);
      if (answer === undefined) continue;
      assert.equal(inside(seq), inside(answer), `compaction ${record.seq} splits ${callId}`);
    }
  }
  return compactions;
}

test('past the budget, older turns become a compaction record; the next prompt uses its summary', () =>
  withFreshSession(async (fixture) => {
    const long = 'x'.repeat(400);
    const model = new ScriptedModel([
      { calls: [{ id: 'c1', name: 'echo', input: { text: `1${long}` } }] },
      { calls: [{ id: 'c2', name: 'echo', input: { text: `2${long}` } }] },
      { calls: [{ id: 'c3', name: 'echo', input: { text: `3${long}` } }] },
      { text: 'All echoed.' },
    ]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [echoTool([])],
      compaction: { maxTokens: 300, keepRecent: 2 },
    });
    const run = loop.start('Echo three long things');
    const compactionEvents: { fromSeq: number; toSeq: number }[] = [];
    for await (const event of run) {
      if (event.type === 'compaction-end') compactionEvents.push(event);
    }
    const result = await run;
    assert.equal(result.status, 'finished');
    assert.deepEqual(model.violations, []);
    const records = await recordsOf(fixture.path);
    const compactions = records.filter((record) => record.type === 'compaction');
    // Twice: the second summarises the first summary too (nested ranges).
    assert.ok(compactions.length >= 2, `compactions: ${compactions.length}`);
    assert.equal(assertNoSplitPairs(records), compactions.length);
    assert.equal(compactionEvents.length, compactions.length);
    assert.ok(model.summaryPrompts.length >= compactions.length);

    // The last prompt is exactly the view a reader derives from the file.
    const beforeFinal = records.filter((record) => record.seq < (records.at(-1)?.seq ?? 0));
    const view = conversationView(beforeFinal);
    assert.deepEqual(pairingViolations(view), []);
    const lastPrompt = model.prompts.at(-1) ?? [];
    const sent = lastPrompt
      .filter((message) => message.role !== 'system')
      .map((message) =>
        typeof message.content === 'string'
          ? `${message.role}: ${message.content}`
          : `${message.role}: ${message.content
              .map((part) =>
                part.type === 'text'
                  ? part.text
                  : part.type === 'tool-call' || part.type === 'tool-result'
                    ? `${part.type} ${part.toolCallId}`
                    : part.type,
              )
              .join(' | ')}`,
      );
    const derived = view.map(
      (message) =>
        `${message.role}: ${message.content
          .map((part) =>
            part.type === 'text'
              ? part.text
              : part.type === 'tool-call' || part.type === 'tool-result'
                ? `${part.type} ${part.callId}`
                : part.type,
          )
          .join(' | ')}`,
    );
    assert.deepEqual(sent, derived);
    const first = view[0];
    assert.equal(first?.extras?.injected, 'compaction');
    assert.ok(first?.content[0]?.type === 'text');
    assert.ok(first.content[0].text.startsWith(COMPACTION_PREFIX));
    // The current turn was never summarised: the final prompt still ends with the last call's result.
    assert.equal(view.at(-1)?.role, 'tool');
    assert.equal(view.at(-2)?.role, 'assistant');
  }));

test('planCompaction never splits a call from its results, keeps the current turn, and only names persisted seqs', () => {
  const seed = Number(process.env.SEED ?? Date.now());
  console.log('seed', seed);
  const turn = fc.record({
    user: fc.boolean(),
    calls: fc.integer({ min: 0, max: 3 }),
    textLength: fc.integer({ min: 0, max: 300 }),
  });
  fc.assert(
    fc.property(
      fc.array(turn, { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 2000 }),
      fc.integer({ min: 1, max: 8 }),
      fc.boolean(),
      (turns, maxTokens, keepRecent, withSystem) => {
        const conversation: LoopMessage[] = [];
        let seq = 1;
        let callNumber = 0;
        if (withSystem) {
          conversation.push({ role: 'system', content: [{ type: 'text', text: 'sys' }], seq });
          seq += 1;
        }
        for (const spec of turns) {
          if (spec.user) {
            conversation.push({ role: 'user', content: [{ type: 'text', text: 'u' }], seq });
            seq += 1;
          }
          const ids = Array.from({ length: spec.calls }, (_, index) => `c${callNumber + index}`);
          callNumber += spec.calls;
          conversation.push({
            role: 'assistant',
            content: [
              { type: 'text', text: 'a'.repeat(spec.textLength) },
              ...ids.map((callId) => ({
                type: 'tool-call' as const,
                callId,
                toolName: 't',
                input: {},
              })),
            ],
            seq,
          });
          seq += 2; // a dispatch envelope between
          for (const callId of ids) {
            conversation.push({
              role: 'tool',
              content: [
                { type: 'tool-result', callId, toolName: 't', output: 'r', isError: false },
              ],
              seq,
            });
            seq += 2;
          }
        }
        const plan = planCompaction(conversation, { maxTokens, keepRecent });
        if (plan === null) return;
        assert.ok(estimateTokens(conversation) > maxTokens);
        const start = withSystem ? 1 : 0;
        const cut = plan.start + plan.count;
        assert.equal(plan.start, start, 'leading system turns are kept');
        assert.ok(plan.count >= 1 && cut <= conversation.length - keepRecent);
        const lastAssistant = conversation.findLastIndex((message) => message.role === 'assistant');
        assert.ok(cut <= lastAssistant, 'the current turn is kept');
        assert.notEqual(conversation[cut]?.role, 'tool', 'no results cut from their call');
        const kept = [...conversation.slice(0, start), ...conversation.slice(cut)];
        assert.ok(kept.slice(start).every((message) => (message.seq ?? 0) > plan.toSeq));
        assert.equal(plan.fromSeq, conversation[start]?.seq);
      },
    ),
    { seed, numRuns: 300 },
  );
});
