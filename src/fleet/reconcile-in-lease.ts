import type { ToolDefinition } from '../loop/types.ts';
import { DEFAULT_RECONCILE_TIMEOUT_MS, type Reconciliation } from '../revival/reconcile-calls.ts';
import { reconcileStoreRun } from '../revival/reconcile-run.ts';
import type { TranscriptStore } from '../store/transcript-store.ts';

/**
 * The share of a lease that asking reconciles may take: a worker asks only once it holds the
 * run, and every reconcile is abandoned (counted unknown) half a lease after it was asked. The
 * writer's heartbeat renews the lease every third of it, so at least two thirds of it are left
 * when the asking starts: even if no heartbeat renewed it meanwhile, the revival writes while the
 * run is still this worker's, and a reconcile that hangs never holds the run past its deadline.
 * (Counted from the asking, not from the claim: reading the run first may take a while under
 * load, and the lease is renewed meanwhile.)
 *
 * @example
 * const budgetMs = writer.leaseMs * RECONCILE_LEASE_SHARE;
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
 * bounded by its timeout and by {@link RECONCILE_LEASE_SHARE} of the writer's lease, counted
 * from the asking. Never throws; writes nothing. Hand the answers to `reviveStoreRun` with the same writer.
 *
 * @example
 * const reconciled = await reconcileInLease({ store, run, writer, tools });
 * await reviveStoreRun({ store, run, maxRevivals: 3, writer, reconciled });
 */
export function reconcileInLease(options: ReconcileInLeaseOptions): Promise<Reconciliation[]> {
  return reconcileStoreRun({
    store: options.store,
    run: options.run,
    tools: options.tools,
    timeoutMs: Math.min(
      options.timeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS,
      options.writer.leaseMs * RECONCILE_LEASE_SHARE,
    ),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
