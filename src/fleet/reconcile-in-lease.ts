import type { ToolDefinition } from '../loop/types.ts';
import type { Reconciliation } from '../revival/reconcile-calls.ts';
import { reconcileStoreRun } from '../revival/reconcile-run.ts';
import type { TranscriptStore } from '../store/transcript-store.ts';

/**
 * The share of a lease that asking reconciles may take: a worker asks only once it holds the
 * run, and every reconcile is abandoned (counted unknown) by half a lease after that — so even if
 * no heartbeat renewed the lease meanwhile, the revival writes while the run is still this
 * worker's, and a reconcile that hangs never holds the run past its deadline.
 *
 * @example
 * const deadline = Date.now() + writer.leaseMs * RECONCILE_LEASE_SHARE;
 */
export const RECONCILE_LEASE_SHARE = 0.5;

/**
 * What {@link reconcileInLease} needs: the store and run, the writer holding it, the tools.
 *
 * @example
 * const options: ReconcileInLeaseOptions = { store, run: 'report-42', writer, tools };
 */
export interface ReconcileInLeaseOptions {
  store: TranscriptStore;
  run: string;
  /** The writer this worker took the run with (its lease bounds the asking). */
  writer: { readonly leaseMs: number };
  tools: readonly ToolDefinition<unknown>[];
  /** How long each reconcile may take at most (default 10 000 ms); the lease may cut it shorter. */
  timeoutMs?: number;
  /** Aborts every reconcile (a worker stopping). */
  signal?: AbortSignal;
  /** The clock, in epoch milliseconds (default `Date.now`). */
  now?: () => number;
}

/**
 * Ask the tools of a run this worker holds what became of its calls in flight, each reconcile
 * bounded by its timeout and by {@link RECONCILE_LEASE_SHARE} of the writer's lease. Never
 * throws; writes nothing. Hand the answers to `reviveStoreRun` with the same writer.
 *
 * @example
 * const reconciled = await reconcileInLease({ store, run, writer, tools });
 * await reviveStoreRun({ store, run, maxRevivals: 3, writer, reconciled });
 */
export function reconcileInLease(options: ReconcileInLeaseOptions): Promise<Reconciliation[]> {
  const now = options.now ?? Date.now;
  return reconcileStoreRun({
    store: options.store,
    run: options.run,
    tools: options.tools,
    deadline: now() + options.writer.leaseMs * RECONCILE_LEASE_SHARE,
    now,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
