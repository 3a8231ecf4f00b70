import type { TranscriptStore } from '../store/transcript-store.ts';
import type { ViewMessage } from '../transcript/conversation-view.ts';
import type { RecordOf, RunRevivedBody } from '../transcript/records.ts';
import { describeError, TranscriptError } from '../transcript/transcript-error.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { NeverDispatchedCall, PendingJoin } from './inspection.ts';
import type { Reconciliation } from './reconcile-calls.ts';
import type { ReviveRefused } from './revive.ts';
import { refused } from './revive-refused.ts';
import { reviveRun } from './revive-run.ts';
import { RunTail } from './run-tail.ts';

/**
 * What {@link reviveStoreRun} is asked: the store, the run, the cap; and the clock is the
 * store's own.
 *
 * @example
 * const request: StoreRevival = { store, run: 'report-42', maxRevivals: 3 };
 */
export interface StoreRevival {
  store: TranscriptStore;
  run: string;
  maxRevivals: number;
  /** The agent the caller means to revive; a run whose session-meta names another is refused. */
  agentId?: string;
  /**
   * The run's writer when the caller already took it over (a worker's `store.take`); without
   * it, revive takes the run with `store.open`. On a refusal revive closes the writer it opened,
   * and leaves one the caller gave it to the caller.
   */
  writer?: TranscriptWriter;
  /**
   * What tools' reconciles answered about the run's calls in flight
   * ({@link reconcileStoreRun}); as `Revival.revive`'s `reconciled`.
   */
  reconciled?: readonly Reconciliation[];
}

/**
 * A run revived in a store, ready for a Loop: its writer (holding the run: on PostgreSQL a
 * lease at a new epoch) and the conversation to go on from.
 *
 * @example
 * const revived: StoreRevived | ReviveRefused = await reviveStoreRun({ store, run: 'report-42', maxRevivals: 3 });
 * if (revived.ok) await new Loop({ backends, writer: revived.writer }).run(revived.messages);
 */
export interface StoreRevived {
  ok: true;
  writer: TranscriptWriter;
  messages: ViewMessage[];
  /** The `run-revived` envelope this revival wrote. */
  revival: RecordOf<'run-revived'>;
  interrupted: string[];
  /** What each reconcile asked answered (as the envelope records it). */
  reconciled: NonNullable<RunRevivedBody['reconciled']>;
  pendingJoins: PendingJoin[];
  neverDispatched: NeverDispatchedCall[];
}

/**
 * Revive one run of a store — the same decisions as a file's revive (docs/revival.md): take the
 * run over (`store.open`: on PostgreSQL a new fencing epoch, so of several revivers racing for a
 * dead run exactly one gets it and the old owner can never write again), decide from its records
 * whether it is revivable, answer every call left in flight "interrupted — outcome unknown — NOT
 * retried", write the resume notice and the `run-revived` envelope the cap counts, and return
 * the writer and the conversation. Never throws for the run's state: a refusal is data
 * (`running` when another writer holds it, `unreadable`, `finished`, `revival-cap`, `empty`,
 * `io-error`). A run's children are not revived here (runs in a store have no child layout yet).
 *
 * @example
 * const revived = await reviveStoreRun({ store, run: 'report-42', maxRevivals: 3 });
 * if (!revived.ok) console.error(revived.reason, revived.detail);
 */
export async function reviveStoreRun(request: StoreRevival): Promise<StoreRevived | ReviveRefused> {
  const { store, run, maxRevivals } = request;
  if (!Number.isSafeInteger(maxRevivals) || maxRevivals < 0) {
    throw new RangeError(
      `reviveStoreRun: maxRevivals must be a non-negative integer (got ${maxRevivals})`,
    );
  }
  let writer: TranscriptWriter;
  try {
    writer = request.writer ?? (await store.open(run));
  } catch (error) {
    if (TranscriptError.isInstance(error)) {
      if (error.code === 'locked') return refused('running', error.message);
      if (error.code === 'unreadable') return refused('unreadable', error.message);
    }
    return refused('io-error', `${run}: cannot open to revive (${describeError(error)})`);
  }
  // A writer the caller took stays the caller's on a refusal: it knows how to let the run go.
  const release = async () => {
    if (request.writer === undefined) await writer.close().catch(() => undefined);
  };
  const read = await store.read(run);
  if (!read.ok) {
    await release();
    return refused(read.reason === 'missing' ? 'unreadable' : read.reason, read.detail);
  }
  const tail = new RunTail();
  for (const record of read.records) tail.add(record);
  const revived = await reviveRun(
    {
      writer,
      tail,
      viewRecords: async () => ({ ok: true, records: read.records }),
      release,
      decided: null,
      noun: 'run',
    },
    request,
  );
  if (!revived.ok) return revived;
  return {
    ok: true,
    writer: revived.writer,
    messages: revived.messages,
    revival: revived.revival,
    interrupted: revived.interrupted,
    reconciled: revived.reconciled,
    pendingJoins: revived.pendingJoins,
    neverDispatched: revived.neverDispatched,
  };
}
