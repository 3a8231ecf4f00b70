/**
 * `llm-agent-revival/revival`: bring an interrupted run back from its own transcript.
 *
 * @example
 * import { Revival } from 'llm-agent-revival/revival';
 * const found = await Revival.inspect({ path: 'runs/a.jsonl', maxRevivals: 2 });
 * if (found.revivable) {
 *   const revived = await Revival.revive({ path: found.path, agentId: 'main', maxRevivals: 2 });
 * }
 *
 * @module
 */
import {
  type ClaimTreeOptions,
  type ClaimTreeResult,
  claimRevivalTree,
} from './claim-revival-tree.ts';
import { type InspectOptions, inspectTranscript } from './inspect.ts';
import type { Inspection } from './inspection.ts';
import type { Reconciliation } from './reconcile-calls.ts';
import { type ReconcileTranscriptOptions, reconcileTranscript } from './reconcile-run.ts';
import {
  type Revived,
  type ReviveOptions,
  type ReviveRefused,
  reviveTranscript,
} from './revive.ts';

// The application decides where a run's children live: the layout it passes, and the default.
export { agentsLayout, type ChildLayout } from '../subagents/child-layout.ts';
// What `inspect` answers (a user switches on the reason and the tail's kind).
export type { InspectOptions } from './inspect.ts';
export type {
  Inspection,
  NotRevivableInspection,
  NotRevivableReason,
  RevivableInspection,
  TailKind,
} from './inspection.ts';
// What `revive` takes and answers; the tree claim a caller takes once and hands to each revive.
export type { Revived, ReviveFailureReason, ReviveOptions, ReviveRefused } from './revive.ts';
export type { TreeClaim } from '../transcript/tree-claim.ts';
// `reconcile`: what it answers, and its options for a file or a store's run.
export type { Reconciliation } from './reconcile-calls.ts';
export {
  type ReconcileStoreRunOptions,
  type ReconcileTranscriptOptions,
  reconcileStoreRun,
} from './reconcile-run.ts';
// The same revival for a run in a store (PostgreSQL).
export {
  reviveStoreRun,
  type StoreRevival,
  type StoreRevived,
} from './revive-store-run.ts';
// The texts a revived run is told (applications and tests match on them).
export {
  BACKGROUND_FRAME,
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
  RESUME_NOTICE,
} from './texts.ts';

/**
 * The engine half of picking up an interrupted run: given one transcript, decide whether there
 * is a run to revive, repair what the interruption left open, tell the run what happened, and
 * hand back the pieces. It scans no folder, asks no human and builds no loop: those are the
 * application's.
 *
 * @example
 * const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
 * if (revived.ok) {
 *   const run = new Loop({ backends, writer: revived.session }).run(revived.messages);
 * } else {
 *   console.error(`${revived.reason}: ${revived.detail}`);
 * }
 */
export class Revival {
  private constructor() {}

  /**
   * Whether a transcript holds a run to revive, and how it was left. Reads the file and
   * writes nothing (no file created, no byte changed, no lock taken); never throws — an
   * unreadable transcript is an answer with `reason: 'unreadable'` and a detail naming the
   * file, line and cause. Reasons, in the order decided: `unreadable`, `running`, `finished`,
   * `revival-cap`, `empty`. Its cost does not grow with the transcript's length: it reads from
   * the last checkpoint.
   *
   * @example
   * const found = await Revival.inspect({ path: 'runs/a.jsonl', maxRevivals: 2 });
   * if (!found.revivable) console.log(found.reason); // 'finished', 'revival-cap', …
   */
  static inspect(options: InspectOptions): Promise<Inspection> {
    return inspectTranscript(options);
  }

  /**
   * Revive one transcript, holding its tree's claim (one reviver per tree: taken here unless
   * the caller passes `treeClaim`, released when the revived session closes; a second revive
   * of the same tree in the same process joins it — revive a child, resume it, then revive its
   * parent — and the last of their sessions to close releases it; another process is refused)
   * and its writer
   * lock while it decides and appends. The tree is the application's `layout` (where a run's
   * children live; `X.agents/<id>.jsonl` by default): a `session-meta` parent link it does not
   * give is reported (`unfollowedLink`) and never followed, and a run it gives no parent is
   * revived as the root of its own tree. Every link up to the tree's root and every child a
   * pending join waits for is checked first, and `inspect`'s verdict is the one acted on: a
   * refusal writes nothing. Then it answers each
   * call that was in flight as interrupted (never replayed), settle every open dispatch but the
   * joins still waiting, tell the run it was resumed (once), and append one `run-revived`
   * envelope, which the cap counts. Each step is crash-safe: a revive killed half-way is
   * completed by the next one, never doubled.
   *
   * Throws only for an impossible request — a path and a session at once, neither, a cap that
   * is not a non-negative integer, a `treeClaim` of another tree or already released
   * (TypeError / RangeError). Everything about the transcript's
   * own state comes back as `{ ok: false, reason, detail }`, with nothing written.
   *
   * @example
   * const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
   * if (revived.ok) await new Loop({ backends, writer: revived.session }).run(revived.messages);
   */
  static revive(options: ReviveOptions): Promise<Revived | ReviveRefused> {
    return reviveTranscript(options);
  }

  /**
   * Ask the tools of a transcript's calls in flight what became of them, before a revive: each
   * call dispatched with an idempotency key, whose tool has a `reconcile`, is asked (all at once,
   * each within `timeoutMs` and `deadline`). Reads the file, writes nothing, never throws. Show
   * the answers to whoever confirms the revive, then pass them to {@link Revival.revive} as
   * `reconciled`: a call that completed is settled with its output, one that did not happen is
   * answered so, and everything else is answered as interrupted. Nothing is run again.
   *
   * @example
   * const reconciled = await Revival.reconcile({ path, tools });
   * const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2, reconciled });
   */
  static reconcile(options: ReconcileTranscriptOptions): Promise<Reconciliation[]> {
    return reconcileTranscript(options);
  }

  /**
   * Claim the tree a transcript belongs to — one reviver per tree — for an application that
   * revives several of its runs: pass the claim to each {@link Revival.revive} of the tree
   * (`treeClaim`), release it when their runs have ended. A second claimer, in any process and
   * from any run of the tree, is refused (`running`, naming the holder's pid and since when);
   * the claim dies with its process.
   *
   * @example
   * const claimed = await Revival.claimTree({ path: 'runs/main.jsonl' });
   * if (!claimed.ok) throw new Error(claimed.detail);
   * const childPath = agentsLayout.childOf('runs/main.jsonl', 'worker-1');
   * const child = await Revival.revive({ path: childPath, agentId: 'worker-1', maxRevivals: 2, treeClaim: claimed.claim });
   * // … revive the rest of the tree the same way, run everything, then:
   * await claimed.claim.release();
   */
  static claimTree(options: ClaimTreeOptions): Promise<ClaimTreeResult> {
    return claimRevivalTree(options);
  }
}
