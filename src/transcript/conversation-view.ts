import { ConversationViewBuilder, type ViewMessage } from './conversation-view-builder.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';

export type { ViewMessage } from './conversation-view-builder.ts';

/**
 * The conversation handed to a model, derived from a transcript's records (docs/loop.md, "The conversation view"): the
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
 * meta, revival, failure, stop, checkpoint) and records of unknown type are not part of the
 * conversation, nor is the failure turn versions before `run-failed` wrote (the system's words,
 * which the model must never read as its own).
 *
 * Pure: records are read once, nothing is written or mutated, and the cost is
 * O(n log n) in the number of messages. It never throws, whatever the records' order, ranges
 * or pairing (fuzzed in test/transcript/normalize.property.test.ts). It is a
 * {@link ConversationViewBuilder} fed every record: use one directly to build the view while
 * streaming a transcript, holding only what survives compaction.
 *
 * @example
 * const view = conversationView(records);
 * console.log(view.length, 'messages');
 */
export function conversationView(
  records: Iterable<TranscriptRecord | ForeignRecord>,
): ViewMessage[] {
  const builder = new ConversationViewBuilder();
  for (const record of records) builder.add(record);
  return builder.view();
}
