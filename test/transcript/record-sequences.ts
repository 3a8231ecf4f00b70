import fc from 'fast-check';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { assistant, call, result, system, tool, user } from './conversation-builders.ts';

/*
 * Random record sequences for the conversation-view properties: messages of every role (calls
 * and results paired at random, some answering no call), envelopes, records of unknown type,
 * and compactions that nest, overlap, cover earlier summaries and reach past themselves.
 */

type AnyRecord = TranscriptRecord | ForeignRecord;

/** One record to write: what it is, with numbers the writer turns into call ids and ranges. */
export type Step =
  | { kind: 'assistant'; calls: number }
  | { kind: 'tool'; picks: number[] }
  | { kind: 'user' | 'system' | 'envelope' | 'foreign' }
  /** A range back from this record: `back` records before it, `span` long (may reach past it). */
  | { kind: 'compaction'; back: number; span: number };

export const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('assistant' as const), calls: fc.nat(3) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tool' as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom<'user' | 'system' | 'envelope' | 'foreign'>(
        'user',
        'user',
        'system',
        'envelope',
        'foreign',
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('compaction' as const),
      back: fc.nat(30),
      span: fc.oneof(fc.nat(5), fc.nat(24)),
    }),
  },
);

/** Records with seq 0, 1, 2, … from the steps: compactions nest, overlap, reach past themselves. */
export function recordsOf(steps: readonly Step[]): AnyRecord[] {
  const written: AnyRecord[] = [];
  const asked: string[] = [];
  const header = (seq: number) => ({ v: 1, seq, at: '2026-12-02T08:00:00.000Z' });
  for (const item of steps) {
    const seq = written.length;
    switch (item.kind) {
      case 'assistant': {
        const ids = Array.from({ length: item.calls }, (_, index) => `c${asked.length + index}`);
        asked.push(...ids);
        written.push({
          ...header(seq),
          type: 'message',
          ...assistant(...ids.map((id) => call(id))),
        });
        break;
      }
      case 'tool': {
        const results = item.picks.map((pick) =>
          asked.length === 0 ? result(`ghost${pick}`) : result(asked[pick % asked.length] ?? 'c0'),
        );
        written.push({ ...header(seq), type: 'message', ...tool(...results) });
        break;
      }
      case 'user':
        written.push({
          ...header(seq),
          type: 'message',
          ...(seq % 3 === 0 ? user(`u${seq}`, { injected: 'background' }) : user(`u${seq}`)),
        });
        break;
      case 'system':
        written.push({ ...header(seq), type: 'message', ...system(`s${seq}`) });
        break;
      case 'envelope':
        written.push({ ...header(seq), type: 'tool-settled', callId: 'c0', status: 'completed' });
        break;
      case 'foreign':
        written.push({ ...header(seq), type: 'from-the-future', role: 'user', unknown: true });
        break;
      case 'compaction': {
        const fromSeq = Math.max(0, seq - item.back);
        written.push({
          ...header(seq),
          type: 'compaction',
          fromSeq,
          toSeq: fromSeq + item.span - 1,
          summary: `summary ${seq}`,
        });
        break;
      }
    }
  }
  return written;
}
