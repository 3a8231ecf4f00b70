import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import type { SessionMeta } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';

/**
 * What {@link TranscriptStore.read} found: every record of a run in seq order, each line's
 * checksum verified — or why there is nothing to read (`missing`), or why what is there
 * cannot be trusted (`unreadable`: `detail` names the run, the record or line, and the cause),
 * or that it could not be read just now (`io-error`: the database went away; try again).
 * A file's torn last line is not part of it (nothing durable was lost): `tornBytes` says how
 * many bytes follow the last record.
 *
 * @example
 * const found: StoreRead = await store.read('main');
 * if (found.ok) console.log(found.records.length);
 */
export type StoreRead =
  | { ok: true; records: (TranscriptRecord | ForeignRecord)[]; tornBytes: number }
  | { ok: false; reason: 'missing' | 'unreadable' | 'io-error'; detail: string };

/**
 * Where runs' transcripts live and who may write them. Two implementations keep one contract
 * (test/store/store-contract.ts runs the same tests on each): {@link FileStore}, a folder of
 * JSONL files on one machine, and the PostgreSQL store, for runs shared by many machines.
 *
 * - `create` starts a run (its `session-meta` as record 0) and returns its one writer;
 *   a run that exists is refused (`TranscriptError` `exists`).
 * - `open` takes over an existing run to append to it — the file store's writer lock, the
 *   database's lease with a new fencing epoch — refused while another writer holds it
 *   (`locked`). A writer that was taken over loses its ownership and never writes again.
 * - `read` and `exportBytes` never write and never take ownership.
 *
 * Durability is the writer's `barrier()`: an fsync on files, a committed transaction on
 * PostgreSQL (with `synchronous_commit` on: the primary's disk; a standby only with
 * synchronous replication configured).
 *
 * @example
 * const writer = await store.create('main', { agentId: 'main', agentType: 'main', label: 'Main', model: 'openai:gpt-5' });
 * await new Loop({ backends: [model], writer }).start('Hello');
 * await writer.close();
 */
export interface TranscriptStore {
  /** `file` or `postgres`. */
  readonly kind: string;
  /** Start the run `run`, owned by the caller. */
  create(run: string, meta: SessionMeta): Promise<TranscriptWriter>;
  /** Take over the existing run `run` to append to it. */
  open(run: string): Promise<TranscriptWriter>;
  /** Every record of `run`, checked. Never throws, never writes. */
  read(run: string): Promise<StoreRead>;
  /** The run's records as v1 JSONL lines, byte for byte what a file of that run holds. */
  exportBytes(run: string): Promise<Buffer>;
  /**
   * Whether a live writer holds `run` now (a file's lock; an unexpired lease) — a hint that
   * may be stale the moment it is read; false for a run that does not exist. Never writes.
   */
  held(run: string): Promise<boolean>;
  /** The runs the store holds, sorted. */
  list(): Promise<string[]>;
  /** Release what the store holds (connections); its writers must be closed first. */
  close(): Promise<void>;
}
