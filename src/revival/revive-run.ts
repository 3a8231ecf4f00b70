import { conversationView, type ViewMessage } from '../transcript/conversation-view.ts';
import type {
  ForeignRecord,
  RecordOf,
  RunRevivedBody,
  TranscriptRecord,
} from '../transcript/records.ts';
import { describeError } from '../transcript/transcript-error.ts';
import type { TailState } from '../transcript/tail-state.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import { assessTail } from './assess-tail.ts';
import type { NeverDispatchedCall, PendingJoin } from './inspection.ts';
import { planRevival } from './plan-revival.ts';
import type { Reconciliation } from './reconcile-calls.ts';
import { type RunRefused, refused } from './revive-refused.ts';
import type { RunTail } from './run-tail.ts';
import { type VerdictFields, verdictDisagreement } from './verdict-agreement.ts';
import { writeRevival } from './write-revival.ts';

/**
 * A run taken over for a revive, whatever store holds it: its writer (holding the run: a
 * file's lock, a database lease) and what was read of it on the way.
 *
 * @example
 * const run: RunToRevive = { writer, tail, viewRecords: async () => ({ ok: true, records }), release: () => writer.close(), decided: null };
 */
export interface RunToRevive {
  writer: TranscriptWriter;
  /** The run's tail, read up to the writer's last record (what the planner needs). */
  tail: RunTail;
  /** The records of the conversation view: at most what no compaction removed. */
  viewRecords(): Promise<
    | { ok: true; records: (TranscriptRecord | ForeignRecord)[] }
    | { ok: false; reason: 'unreadable' | 'io-error'; detail: string }
  >;
  /** Let the run go after a refusal (close the writer revive opened; nothing for a caller's). */
  release(): Promise<void>;
  /**
   * The verdict decided before the run was taken over (from its last checkpoint, as `inspect`
   * and `status` see it), or null: when the records read in full say otherwise, the
   * checkpoint lied and the revive is refused as `unreadable`.
   */
  decided: VerdictFields | null;
  /**
   * Why a child a join waits for cannot be trusted, or null (the file layout's check); a store
   * whose runs have no child layout passes nothing.
   */
  checkJoins?: (agentIds: string[]) => Promise<string | null>;
  /** What a failed write leaves "as a crash would leave it": `transcript` or `run`. */
  noun: string;
}

/**
 * What {@link reviveRun} is asked beyond the run: who the caller means, the cap, the reconciles.
 *
 * @example
 * const request: RunRevivalRequest = { agentId: 'main', maxRevivals: 2 };
 */
export interface RunRevivalRequest {
  /** A run whose session-meta names another agent is refused; omitted, any agent. */
  agentId?: string | undefined;
  maxRevivals: number;
  reconciled?: readonly Reconciliation[] | undefined;
}

/**
 * A run revived by {@link reviveRun}: the writer, the conversation to go on from, and what the
 * revival wrote and left open.
 *
 * @example
 * if (revived.ok) await new Loop({ backends, writer: revived.writer }).run(revived.messages);
 */
export interface RunRevived {
  ok: true;
  writer: TranscriptWriter;
  state: TailState;
  messages: ViewMessage[];
  revival: RecordOf<'run-revived'>;
  interrupted: string[];
  reconciled: NonNullable<RunRevivedBody['reconciled']>;
  pendingJoins: PendingJoin[];
  neverDispatched: NeverDispatchedCall[];
}

/**
 * The one revive pipeline, for files and PostgreSQL alike, over a run already taken over:
 * check the agent, assess the tail (refusing a checkpoint that lied), check the children the
 * joins wait for, read the conversation view, plan the revival, write it through the writer.
 * Every refusal releases the run first (`run.release`); never throws for the run's state.
 *
 * @example
 * const revived = await reviveRun(run, { agentId: 'main', maxRevivals: 2 });
 * if (!revived.ok) console.error(revived.reason, revived.detail);
 */
export async function reviveRun(
  run: RunToRevive,
  request: RunRevivalRequest,
): Promise<RunRevived | RunRefused> {
  const { writer } = run;
  const path = writer.path;
  const refuse = async (reason: RunRefused['reason'], detail: string): Promise<RunRefused> => {
    await run.release().catch(() => undefined);
    return refused(reason, detail);
  };
  const state = writer.state;
  const found = state.meta?.agentId;
  if (request.agentId !== undefined && found !== undefined && found !== request.agentId) {
    return refuse(
      'unreadable',
      `${path}: its session-meta names agent '${found}', not '${request.agentId}'`,
    );
  }
  const assessment = assessTail(state, { maxRevivals: request.maxRevivals, running: false });
  // One verdict: revive acts on what inspect (and so `status`) decided from the checkpoint.
  // When the records read in full say otherwise, the checkpoint lied: refuse, as inspect does.
  const lie = run.decided === null ? null : verdictDisagreement(run.decided, assessment);
  if (lie !== null) return refuse('unreadable', `${path}: ${lie}`);
  if (!assessment.revivable) {
    return refuse(assessment.reason ?? 'unreadable', `${path}: ${assessment.detail ?? ''}`);
  }
  if (run.checkJoins !== undefined) {
    const joined = await run.checkJoins(assessment.pendingJoins.flatMap((join) => join.agentIds));
    if (joined !== null) return refuse('unreadable', joined);
  }
  const kept = await run.viewRecords();
  if (!kept.ok) return refuse(kept.reason, kept.detail);
  const plan = planRevival({
    records: run.tail.records,
    lastMessage: conversationView(kept.records).at(-1),
    state,
    maxRevivals: request.maxRevivals,
    ...(request.reconciled === undefined ? {} : { reconciled: request.reconciled }),
  });
  let appended: TranscriptRecord[];
  let revival: RecordOf<'run-revived'>;
  try {
    ({ appended, revival } = await writeRevival(writer, plan));
  } catch (error) {
    return refuse(
      'io-error',
      `${path}: a write failed while reviving (${describeError(error)}); the ${run.noun} is as a crash would leave it, and the next revive completes it`,
    );
  }
  return {
    ok: true,
    writer,
    state,
    // What compaction removed stays removed: nothing appended lies in a compaction's range.
    messages: conversationView([...kept.records, ...appended]),
    revival,
    interrupted: plan.envelope.interrupted,
    reconciled: plan.envelope.reconciled ?? [],
    pendingJoins: plan.pendingJoins,
    neverDispatched: assessment.neverDispatched,
  };
}
