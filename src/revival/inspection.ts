import type { ParentLink } from '../transcript/records.ts';
import type { RunHalt } from '../transcript/run-halt.ts';
import type { OpenDispatch } from '../transcript/tail-state.ts';

/**
 * Why a transcript is not revivable, in the order they are decided (docs/revival.md, "The reasons, in the order they are decided").
 *
 * - `unreadable`: missing, a folder, not a transcript, damaged mid-file, from a newer version,
 *   or an I/O error reading it;
 * - `running`: a live process holds its writer lock (a run, or another reviver);
 * - `finished`: its last message is an assistant turn asking for no tools;
 * - `revival-cap`: it already has `maxRevivals` counted `run-revived` envelopes;
 * - `empty`: there is no conversation to carry on (no user, assistant or tool turn).
 *
 * @example
 * if (found.reason === 'revival-cap') console.log(`revived ${found.revivalsUsed} times already`);
 */
export type NotRevivableReason = 'unreadable' | 'running' | 'finished' | 'revival-cap' | 'empty';

/**
 * How an interrupted run was left.
 *
 * - `calls-unanswered`: its last assistant turn has calls with no result (in flight, never
 *   dispatched, or a join still waiting);
 * - `results-unread`: every call is answered, and the model never read the results;
 * - `user-turn`: a user turn (or a system turn) the model never answered.
 *
 * @example
 * if (found.tail === 'calls-unanswered') console.log(found.openDispatches.length, 'calls open');
 */
export type TailKind = 'calls-unanswered' | 'results-unread' | 'user-turn';

/**
 * A call of the last assistant turn that was never dispatched: the Loop runs it (no retry).
 *
 * @example
 * for (const call of found.neverDispatched) console.log(`${call.toolName} (${call.callId}) never started`);
 */
export interface NeverDispatchedCall {
  callId: string;
  toolName: string;
}

/**
 * A join (`task_wait`) dispatched and never answered: left open for the revived children.
 *
 * @example
 * if (revived.ok) for (const join of revived.pendingJoins) console.log(join.callId, 'waits for', join.agentIds);
 */
export interface PendingJoin {
  callId: string;
  agentIds: string[];
}

/**
 * What {@link Revival.inspect} found: a union on `revivable`, so that TypeScript narrows it —
 * a {@link RevivableInspection} has its `tail`, a {@link NotRevivableInspection} its `reason`
 * and `detail`. Everything but `path`, `revivable`, `maxRevivals` and the counts is absent or
 * empty when the transcript is `unreadable`.
 *
 * @example
 * const found: Inspection = await Revival.inspect({ path, maxRevivals: 2 });
 * console.log(found.revivable ? found.tail : `${found.reason}: ${found.detail}`);
 */
export type Inspection = RevivableInspection | NotRevivableInspection;

/**
 * An {@link Inspection} of a run that can be revived: `reason` is absent, `tail` says how the
 * run was left.
 *
 * @example
 * if (found.revivable) console.log(`${found.tail}, ${found.openDispatches.length} calls open`);
 */
export interface RevivableInspection extends InspectionFacts {
  revivable: true;
  reason?: never;
  detail?: string;
  tail: TailKind;
  reviver?: never;
}

/**
 * An {@link Inspection} of a run that cannot be revived, and why: `reason`, and `detail`, one
 * line a human can act on (for `unreadable`, the file, line and cause).
 *
 * @example
 * if (!found.revivable && found.reason === 'unreadable') console.error(found.detail);
 */
export interface NotRevivableInspection extends InspectionFacts {
  revivable: false;
  reason: NotRevivableReason;
  detail: string;
  tail?: never;
  /**
   * For `running` because another reviver holds the tree's claim: who (pid, since when, host)
   * and the tree's root transcript.
   */
  reviver?: { root: string; pid: number | null; since: string | null; host: string | null };
}

/**
 * What every {@link Inspection} has, revivable or not.
 *
 * @example
 * const facts: InspectionFacts = found; // path, counts, open calls, size, estimate
 */
export interface InspectionFacts {
  path: string;
  /** Counted `run-revived` envelopes (a race's second envelope after one record counts once). */
  revivalsUsed: number;
  maxRevivals: number;
  /** Every dispatch with no settle, joins included. */
  openDispatches: OpenDispatch[];
  neverDispatched: NeverDispatchedCall[];
  pendingJoins: PendingJoin[];
  agentId?: string;
  agentType?: string;
  label?: string;
  parent?: ParentLink;
  /**
   * Why the run stopped, when it says so: `failed` (every model backend failed: the cause, the
   * last error, the backend, when) or `stopped` (asked to stop: SIGINT, SIGTERM, `abort()`).
   * Absent for a run whose process died, and once anything was written after it.
   */
  halt?: RunHalt;
  /** The transcript's size in bytes, a torn tail included. */
  bytes: number;
  /** Message records (system turns included; compacted ones too). */
  messages: number;
  /**
   * About how many tokens a resume would send: the bytes of the message records divided by
   * four. An over-estimate — it counts each line's JSON framing and the turns a compaction
   * replaced — which is the safe side for a question about spending.
   */
  estimatedTokens: number;
}
