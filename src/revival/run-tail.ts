import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { isRevivalWrite } from './plan-revival.ts';

/**
 * The records {@link planRevival} needs, kept while streaming a transcript: from the last
 * record the run wrote itself (the last one {@link isRevivalWrite} does not claim) to the end.
 * Each record the run wrote drops everything before it, so what is held is that record plus
 * the writes of an unfinished revive and checkpoints after it — a handful, whatever the
 * transcript's length.
 *
 * @example
 * const tail = new RunTail();
 * for await (const record of readRecords(path)) tail.add(record);
 * planRevival({ records: tail.records, lastMessage, state, maxRevivals: 2 });
 */
export class RunTail {
  #records: (TranscriptRecord | ForeignRecord)[] = [];

  /** Take the next record, in file order. */
  add(record: TranscriptRecord | ForeignRecord): void {
    if (isRevivalWrite(record)) this.#records.push(record);
    else this.#records = [record];
  }

  /** The records kept, in file order. */
  get records(): readonly (TranscriptRecord | ForeignRecord)[] {
    return this.#records;
  }
}
