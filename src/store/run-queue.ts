import type { SessionMeta } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { TranscriptStore } from './transcript-store.ts';

/**
 * A writer that holds its run under a lease carrying a fencing epoch: a writer whose epoch
 * moved (another worker took the run) is `fenced` and never appends again.
 *
 * @example
 * const writer: LeasedWriter | null = await queue.take('report-42', 'queued');
 * if (writer !== null) console.log(writer.epoch, writer.leaseMs);
 */
export interface LeasedWriter extends TranscriptWriter {
  /** The run's epoch this writer holds it at. */
  readonly epoch: number;
  /** How long the lease lasts without a barrier or heartbeat. */
  readonly leaseMs: number;
  /** True once another writer took the run: nothing more this writer does reaches it. */
  readonly fenced: boolean;
  /** Let the run go as `status` when the writer closes (default: by how it ended). */
  releaseAs(status: 'queued' | 'capped'): void;
  /** Stop holding the run without letting it go: its lease runs out, for whoever comes next. */
  abandon(reason: string): void;
}

/**
 * A wait for a change of some runs' owner or status: read the runs after `watch` resolves, then
 * `changed(pollMs)` waits for the next change, never longer than `pollMs` (a wake-up is a hint;
 * the runs are read again either way).
 *
 * @example
 * const watch = await queue.watch(['main.agents/researcher-call_1']);
 * try { await watch.changed(1000); } finally { watch.dispose(); }
 */
export interface RunWatch {
  changed(pollMs: number, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

/**
 * Where a run stands, for a join waiting on it.
 *
 * @example
 * const standing: RunStanding = { owner: null, status: 'finished', depth: 1 };
 */
export interface RunStanding {
  owner: string | null;
  status: string;
  depth: number;
}

/**
 * A store many workers share as a queue of runs: what the fleet (workers, children as runs,
 * approvals) needs beyond {@link TranscriptStore}. Ownership is a lease with a fencing epoch;
 * every method that hands out or moves a run is decided by the store, so exactly one of several
 * workers wins each run. The PostgreSQL store is the one implementation; the fleet is typed on
 * this port, not on it, so what it relies on is written down here.
 *
 * @example
 * for (const item of await queue.work(16)) {
 *   const writer = await queue.take(item.run, item.dead ? 'dead' : 'queued');
 *   if (writer !== null) await writer.close();
 * }
 */
export interface RunQueue extends TranscriptStore {
  /** This worker incarnation, as it shows as a run's owner. */
  readonly owner: string;
  /** Take a run listed by `work` as `kind`, at a new epoch; null when another got there first. */
  take(run: string, kind: 'dead' | 'queued' | 'approved'): Promise<LeasedWriter | null>;
  /** Start a run unowned and `queued` (a child of `parent` while its epoch is still current). */
  submit(
    run: string,
    meta: SessionMeta,
    prompt: string,
    parent?: { run: string; epoch: number },
  ): Promise<void>;
  /** The work waiting, oldest first: dead runs, and unowned queued or approved ones. */
  work(limit: number): Promise<{ run: string; status: string; dead: boolean }[]>;
  /** Fence a dead run at a new epoch and leave it waiting as `status`; true for the one that did. */
  park(run: string, status: 'awaiting-approval' | 'capped'): Promise<boolean>;
  /** Move an unowned run from status `from` to `to`; true when it was in `from`. */
  mark(run: string, from: string, to: string): Promise<boolean>;
  /** Where each of `runs` stands; a run that does not exist is absent. */
  standing(runs: readonly string[]): Promise<Map<string, RunStanding>>;
  /** How many children of `parent` have not ended. */
  activeChildren(parent: string): Promise<number>;
  /** Wake-ups when any of `runs` changes owner or status. */
  watch(runs: readonly string[]): Promise<RunWatch>;
  /** Let go of a run its taker at `epoch` cannot read: unowned, `unreadable`, with `detail`. */
  parkUnreadable(run: string, epoch: number, detail: string): Promise<boolean>;
}
