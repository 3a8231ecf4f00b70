import { normalizeConversation } from './normalize-conversation.ts';
import type { ForeignRecord, Message, TranscriptRecord } from './records.ts';
import { legacyFailureHalt } from './run-halt.ts';
import { isKnownRecord } from './validate-record.ts';
import { ViewSurvivors } from './view-survivors.ts';

/**
 * A message of a conversation view, with the `seq` of the record it came from: a `message`
 * record, the `compaction` record for a compaction summary, or for a tool message that
 * normalization merged from several, the first of them written.
 *
 * @example
 * const last: ViewMessage | undefined = conversationView(records).at(-1);
 * if (last?.extras?.injected === 'revival') console.log('told at seq', last.seq);
 */
export type ViewMessage = Message & { seq: number };

/**
 * {@link conversationView} fed one record at a time, holding only what can still be in the
 * view: the messages and compaction summaries no compaction has removed so far, and the
 * removed seq ranges (merged: a run that compacts from its first turn each time keeps one).
 * A compaction's range only reaches records written before it, so when one arrives, what it
 * covers is dropped at once and anything arriving later in its range is never kept. Memory is
 * bounded by what survives compaction, not by the transcript: a 1 GiB run compacted at a
 * 400 kB budget holds about 400 kB of messages.
 *
 * `view()` after any number of `add`s is exactly `conversationView` of the records added so
 * far, in any order (property-tested against the batch algorithm in
 * test/transcript/conversation-view-builder.property.test.ts); it does not consume the
 * builder, so records can be added after it. Neither method throws, whatever the records.
 *
 * @example
 * const builder = new ConversationViewBuilder();
 * for await (const record of readRecords('runs/a.jsonl')) builder.add(record);
 * const view = builder.view();
 */
export class ConversationViewBuilder {
  /** The surviving messages and summaries, by the id their survivor entry carries. */
  readonly #messages = new Map<number, ViewMessage>();
  readonly #survivors = new ViewSurvivors((id) => this.#messages.delete(id));
  #nextId = 0;

  /** How many messages and summaries are held now (what survived the compactions so far). */
  get held(): number {
    return this.#survivors.size;
  }

  /** Take one record into account (records that are not part of the conversation are ignored). */
  add(record: TranscriptRecord | ForeignRecord): void {
    if (!isKnownRecord(record)) return;
    const id = this.#nextId;
    if (record.type === 'message') {
      // An old version's failure turn is the system's words, never shown as the model's own.
      if (legacyFailureHalt(record) !== null) return;
      this.#nextId += 1;
      if (!this.#survivors.addMessage(record.seq, id)) return;
      const message: ViewMessage = { role: record.role, content: record.content, seq: record.seq };
      if (record.extras !== undefined) message.extras = record.extras;
      this.#messages.set(id, message);
    } else if (record.type === 'compaction') {
      this.#nextId += 1;
      if (!this.#survivors.addCompaction(record.seq, record.fromSeq, record.toSeq, id)) return;
      this.#messages.set(id, {
        role: 'user',
        content: [{ type: 'text', text: record.summary }],
        extras: { injected: 'compaction' },
        seq: record.seq,
      });
    }
  }

  /**
   * The conversation view of the records added so far: surviving messages in seq order with
   * each surviving summary where its range began, {@link normalizeConversation normalized}.
   * O(n log n) in the messages held.
   */
  view(): ViewMessage[] {
    const survivors = this.#survivors.inViewOrder();
    return normalizeConversation(survivors.map(({ a }) => this.#messages.get(a) as ViewMessage));
  }
}
