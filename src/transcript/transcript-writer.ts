import type { RecordBody, TranscriptRecord } from './records.ts';
import type { TailState } from './tail-state.ts';

/**
 * The single writer of one transcript, whatever holds it: a file ({@link Session}) or a
 * database (the PostgreSQL store's writer). Everything that writes a run — the loop, its
 * tools — needs only this, so a run goes on the same way on either.
 *
 * The contract every implementation keeps (the store contract suite checks it on each):
 * records get consecutive seqs from 0 in call order, each line carries its CRC-32; what was
 * appended before {@link barrier} resolved is durable (fsync, or a committed transaction)
 * and nothing after a refused barrier is; one writer at a time — a writer that lost its
 * ownership (the file replaced, a newer lease epoch) refuses everything with
 * `ownership-lost` and never writes again.
 *
 * @example
 * async function note(writer: TranscriptWriter, text: string): Promise<void> {
 *   await writer.append({ type: 'message', role: 'user', content: [{ type: 'text', text }] });
 *   await writer.barrier();
 * }
 */
export interface TranscriptWriter {
  /** Where the transcript lives, for messages: a file path, or `<database>#<run id>`. */
  readonly path: string;
  /** The folded state of everything appended so far. */
  readonly state: TailState;
  /** The seq of the last record appended, -1 for none. */
  readonly lastSeq: number;
  /** True once a write failed or ownership was lost: the writer refuses everything. */
  readonly poisoned: boolean;
  /** Append one record; its seq and time are assigned now, in call order. */
  append(body: RecordBody): Promise<TranscriptRecord>;
  /** Everything appended before it is durable when it resolves. */
  barrier(): Promise<void>;
  /** `append` then `barrier`. */
  appendDurable(body: RecordBody): Promise<TranscriptRecord>;
  /** A closing checkpoint, a barrier, then give up ownership. Never rejects for a failed write. */
  close(): Promise<void>;
}
