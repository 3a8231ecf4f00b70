import { normalizeConversation } from './normalize-conversation.ts';
import type { ForeignRecord, Message, TranscriptRecord } from './records.ts';
import { isKnownRecord } from './validate-record.ts';

/**
 * A message of a conversation view, with the `seq` of the record it came from: a `message`
 * record, the `compaction` record for a compaction summary, or for a tool message that
 * normalization merged from several, the first of them written.
 */
export type ViewMessage = Message & { seq: number };

/** A message waiting for its place: summaries stand where their range began. */
interface Placed {
  position: number;
  seq: number;
  message: ViewMessage;
}

/** Inclusive ranges, sorted and merged, so that a lookup is a binary search. */
type Ranges = [from: number, to: number][];

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
  /** Surviving messages, in the order added. */
  #messages: Placed[] = [];
  /** Surviving compaction summaries, in the order added. */
  #summaries: Placed[] = [];
  #ranges: Ranges = [];
  /** While true, `#messages` is sorted by seq: a compaction drops one slice of it. */
  #inOrder = true;

  /** How many messages and summaries are held now (what survived the compactions so far). */
  get held(): number {
    return this.#messages.length + this.#summaries.length;
  }

  /** Take one record into account (records that are not part of the conversation are ignored). */
  add(record: TranscriptRecord | ForeignRecord): void {
    if (!isKnownRecord(record)) return;
    if (record.type === 'message') {
      if (isRemoved(this.#ranges, record.seq)) return;
      const message: ViewMessage = { role: record.role, content: record.content, seq: record.seq };
      if (record.extras !== undefined) message.extras = record.extras;
      const last = this.#messages.at(-1);
      if (last !== undefined && !(record.seq >= last.seq)) this.#inOrder = false;
      this.#messages.push({ position: record.seq, seq: record.seq, message });
    } else if (record.type === 'compaction') {
      // Every compaction's range goes, whether or not the compaction itself survives; a range
      // reaching its own record or beyond is cut there (it can never hide what follows it).
      const to = Math.min(record.toSeq, record.seq - 1);
      if (to >= record.fromSeq) this.#remove(record.fromSeq, to);
      if (isRemoved(this.#ranges, record.seq)) return;
      this.#summaries.push({
        position: record.fromSeq,
        seq: record.seq,
        message: {
          role: 'user',
          content: [{ type: 'text', text: record.summary }],
          extras: { injected: 'compaction' },
          seq: record.seq,
        },
      });
    }
  }

  /**
   * The conversation view of the records added so far: surviving messages in seq order with
   * each surviving summary where its range began, {@link normalizeConversation normalized}.
   * O(n log n) in the messages held.
   */
  view(): ViewMessage[] {
    const placed = [...this.#messages, ...this.#summaries];
    placed.sort((left, right) => left.position - right.position || left.seq - right.seq);
    return normalizeConversation(placed.map((entry) => entry.message));
  }

  #remove(from: number, to: number): void {
    const hull = insertRange(this.#ranges, from, to);
    if (this.#inOrder) {
      const start = firstAtLeast(this.#messages, hull[0]);
      const end = firstAtLeast(this.#messages, hull[1], true);
      if (end > start) this.#messages.splice(start, end - start);
    } else {
      this.#messages = this.#messages.filter((entry) => !isRemoved(this.#ranges, entry.seq));
    }
    this.#summaries = this.#summaries.filter((entry) => !isRemoved(this.#ranges, entry.seq));
  }
}

/**
 * Add `[from, to]` to sorted ranges that neither overlap nor touch, merging it with those it
 * overlaps or touches (what sorting and merging them all again would give); returns the merged
 * range that now holds it, which may also cover the gaps it closed.
 */
function insertRange(ranges: Ranges, from: number, to: number): [number, number] {
  // The first range that ends at or after from - 1 (ends are sorted too).
  let first = 0;
  let high = ranges.length;
  while (first < high) {
    const middle = (first + high) >>> 1;
    if ((ranges[middle] as [number, number])[1] + 1 < from) first = middle + 1;
    else high = middle;
  }
  let last = first - 1;
  while (last + 1 < ranges.length && (ranges[last + 1] as [number, number])[0] <= to + 1) {
    last += 1;
  }
  const merged: [number, number] = [from, to];
  if (last >= first) {
    merged[0] = Math.min(from, (ranges[first] as [number, number])[0]);
    merged[1] = Math.max(to, (ranges[last] as [number, number])[1]);
  }
  ranges.splice(first, last - first + 1, merged);
  return merged;
}

/** The index of the first entry whose seq is ≥ `seq` (> `seq` when `after`), in a sorted list. */
function firstAtLeast(entries: readonly Placed[], seq: number, after = false): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = (entries[middle] as Placed).seq;
    if (at < seq || (after && at === seq)) low = middle + 1;
    else high = middle;
  }
  return low;
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
