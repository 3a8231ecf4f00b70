import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  ConversationViewBuilder,
  type ViewMessage,
} from '../../src/transcript/conversation-view-builder.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import type {
  CompactionBody,
  ForeignRecord,
  RecordHeader,
  TranscriptRecord,
} from '../../src/transcript/records.ts';
import { assistant, user } from './conversation-builders.ts';
import { recordsOf, step } from './record-sequences.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);
const parameters = { seed, numRuns: 400 };

type AnyRecord = TranscriptRecord | ForeignRecord;
type CompactionRecord = RecordHeader & CompactionBody;

/**
 * The batch algorithm conversationView used before the builder existed, kept verbatim as the
 * oracle: collect every message and compaction, compute the removed ranges from all of them,
 * filter, place, sort, normalize.
 */
function batchConversationView(records: Iterable<AnyRecord>): ViewMessage[] {
  interface Placed {
    position: number;
    seq: number;
    message: ViewMessage;
  }
  const messages: Placed[] = [];
  const compactions: CompactionRecord[] = [];
  for (const record of records) {
    if ('unknown' in record && record.unknown === true) continue;
    const known = record as TranscriptRecord;
    if (known.type === 'message') {
      const message: ViewMessage = { role: known.role, content: known.content, seq: known.seq };
      if (known.extras !== undefined) message.extras = known.extras;
      messages.push({ position: known.seq, seq: known.seq, message });
    } else if (known.type === 'compaction') {
      compactions.push(known);
    }
  }
  const ranges: [number, number][] = [];
  for (const compaction of compactions) {
    const to = Math.min(compaction.toSeq, compaction.seq - 1);
    if (to >= compaction.fromSeq) ranges.push([compaction.fromSeq, to]);
  }
  ranges.sort((left, right) => left[0] - right[0]);
  const merged: [number, number][] = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && range[0] <= last[1] + 1) last[1] = Math.max(last[1], range[1]);
    else merged.push([range[0], range[1]]);
  }
  const removed = (seq: number) => merged.some(([from, to]) => from <= seq && seq <= to);
  const placed = messages.filter((entry) => !removed(entry.seq));
  for (const compaction of compactions) {
    if (removed(compaction.seq)) continue;
    placed.push({
      position: compaction.fromSeq,
      seq: compaction.seq,
      message: {
        role: 'user',
        content: [{ type: 'text', text: compaction.summary }],
        extras: { injected: 'compaction' },
        seq: compaction.seq,
      },
    });
  }
  placed.sort((left, right) => left.position - right.position || left.seq - right.seq);
  return normalizeConversation(placed.map((entry) => entry.message));
}

/** How many messages and summaries of `records` no compaction among them removes. */
function survivors(records: readonly AnyRecord[]): number {
  const ranges: [number, number][] = [];
  for (const record of records) {
    if (record.type === 'compaction' && 'fromSeq' in record && 'toSeq' in record) {
      ranges.push([Number(record.fromSeq), Math.min(Number(record.toSeq), record.seq - 1)]);
    }
  }
  const removed = (seq: number) => ranges.some(([from, to]) => from <= seq && seq <= to);
  return records.filter(
    (record) =>
      !('unknown' in record) &&
      (record.type === 'message' || record.type === 'compaction') &&
      !removed(record.seq),
  ).length;
}

test('fed in file order, the builder gives the batch view and holds only what can survive', () => {
  const seen = { compacted: 0, severalStand: 0, summariesRemoved: 0, dropped: 0 };
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), fc.nat(60), (steps, viewAt) => {
      const records = recordsOf(steps);
      const builder = new ConversationViewBuilder();
      records.forEach((record, index) => {
        builder.add(record);
        const prefix = records.slice(0, index + 1);
        assert.equal(builder.held, survivors(prefix), `after seq ${record.seq}`);
        // view() does not consume the builder.
        if (index === viewAt) assert.deepEqual(builder.view(), batchConversationView(prefix));
      });
      const expected = batchConversationView(records);
      assert.deepEqual(builder.view(), expected);
      assert.deepEqual(conversationView(records), expected);
      const compactions = records.filter((record) => record.type === 'compaction');
      const shown = expected.filter((message) => message.extras?.injected === 'compaction');
      if (compactions.length > 0) seen.compacted += 1;
      if (compactions.length > 1 && shown.length < compactions.length) seen.summariesRemoved += 1;
      if (shown.length > 1) seen.severalStand += 1;
      if (builder.held < records.filter((record) => record.type === 'message').length) {
        seen.dropped += 1;
      }
    }),
    parameters,
  );
  // The generator must reach the cases the property is about.
  for (const [name, count] of Object.entries(seen)) assert.ok(count > 10, `only ${count} ${name}`);
});

test('fed in any order, the builder still gives the batch view', () => {
  fc.assert(
    fc.property(
      fc.array(step, { maxLength: 40 }).chain((steps) => {
        const records = recordsOf(steps);
        return fc.shuffledSubarray(records, { minLength: records.length });
      }),
      (shuffled) => {
        const builder = new ConversationViewBuilder();
        for (const record of shuffled) builder.add(record);
        assert.deepEqual(builder.view(), batchConversationView(shuffled));
      },
    ),
    parameters,
  );
});

test('a run compacted from its first turn each time keeps one range and a bounded view', () => {
  const builder = new ConversationViewBuilder();
  const header = (seq: number) => ({ v: 1, seq, at: '2026-12-02T08:00:00.000Z' });
  let seq = 0;
  let maxHeld = 0;
  for (let turn = 0; turn < 2000; turn += 1) {
    builder.add({ ...header(seq), type: 'message', ...user(`question ${turn}`) });
    seq += 1;
    builder.add({ ...header(seq), type: 'message', ...assistant(`answer ${turn}`) });
    seq += 1;
    if (turn % 10 === 9) {
      builder.add({ ...header(seq), type: 'compaction', fromSeq: 0, toSeq: seq - 3, summary: 'S' });
      seq += 1;
    }
    maxHeld = Math.max(maxHeld, builder.held);
  }
  assert.ok(maxHeld <= 22, `held up to ${maxHeld}`);
  const view = builder.view();
  assert.equal(view[0]?.extras?.injected, 'compaction');
  assert.equal(view.length, builder.held);
});
