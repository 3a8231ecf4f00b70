import { normalizeConversation } from './normalize-conversation.ts';
import type {
  CompactionBody,
  ForeignRecord,
  Message,
  RecordHeader,
  TranscriptRecord,
} from './records.ts';
import { isKnownRecord } from './validate-record.ts';

/**
 * A message of a conversation view, with the `seq` of the record it came from: a `message`
 * record, the `compaction` record for a compaction summary, or for a tool message that
 * normalization merged from several, the first of them written.
 */
export type ViewMessage = Message & { seq: number };

type CompactionRecord = RecordHeader & CompactionBody;

/** A message waiting for its place: summaries stand where their range began. */
interface Placed {
  position: number;
  seq: number;
  message: ViewMessage;
}

/**
 * The conversation handed to a model, derived from a transcript's records (SPEC §3): the
 * messages in file order, minus every record whose `seq` lies in a `compaction`'s
 * `[fromSeq, toSeq]`, plus each surviving compaction's summary as a `user` message with
 * `extras.injected = 'compaction'` standing where its range began; then
 * {@link normalizeConversation normalized}, so that every tool result stands right after the
 * turn that asked for it.
 *
 * Compactions nest and overlap: every compaction's range is removed, whether or not the
 * compaction itself survives, and a compaction whose own record lies in a later compaction's
 * range disappears with its summary (the later summary replaced it). A range only ever reaches
 * records written before its compaction (the validator insists; a range reaching further is
 * cut there, so a compaction can never hide what follows it). Envelopes (dispatch, settle,
 * meta, revival, checkpoint) and records of unknown type are not part of the conversation.
 *
 * Pure: records are read once, nothing is written or mutated, and the cost is
 * O(n log n) in the number of messages. It never throws, whatever the records' order, ranges
 * or pairing (fuzzed in test/transcript/normalize.property.test.ts).
 *
 * @example
 * const view = conversationView(records);
 * if (pairingViolations(view).length === 0) await model.generate(view);
 */
export function conversationView(
  records: Iterable<TranscriptRecord | ForeignRecord>,
): ViewMessage[] {
  const messages: Placed[] = [];
  const compactions: CompactionRecord[] = [];
  for (const record of records) {
    if (!isKnownRecord(record)) continue;
    if (record.type === 'message') {
      const message: ViewMessage = { role: record.role, content: record.content, seq: record.seq };
      if (record.extras !== undefined) message.extras = record.extras;
      messages.push({ position: record.seq, seq: record.seq, message });
    } else if (record.type === 'compaction') {
      compactions.push(record);
    }
  }
  const removed = removedRanges(compactions);
  const placed: Placed[] = messages.filter((entry) => !isRemoved(removed, entry.seq));
  for (const compaction of compactions) {
    if (isRemoved(removed, compaction.seq)) continue;
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

/** Inclusive ranges, sorted and merged, so that a lookup is a binary search. */
type Ranges = [from: number, to: number][];

function removedRanges(compactions: readonly CompactionRecord[]): Ranges {
  const ranges: Ranges = [];
  for (const compaction of compactions) {
    const to = Math.min(compaction.toSeq, compaction.seq - 1);
    if (to >= compaction.fromSeq) ranges.push([compaction.fromSeq, to]);
  }
  ranges.sort((left, right) => left[0] - right[0]);
  const merged: Ranges = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && range[0] <= last[1] + 1) last[1] = Math.max(last[1], range[1]);
    else merged.push([range[0], range[1]]);
  }
  return merged;
}

function isRemoved(ranges: Ranges, seq: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const range = ranges[middle] as [number, number];
    if (seq < range[0]) high = middle - 1;
    else if (seq > range[1]) low = middle + 1;
    else return true;
  }
  return false;
}
