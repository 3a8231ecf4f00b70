import type { TailState } from '../transcript/tail-state.ts';
import type {
  InspectionFacts,
  NeverDispatchedCall,
  NotRevivableInspection,
  NotRevivableReason,
  PendingJoin,
  RevivableInspection,
  TailKind,
} from './inspection.ts';

/**
 * The part of an {@link Inspection} that follows from the folded state alone.
 *
 * @example
 * const assessment: Assessment = assessTail(state, { maxRevivals: 2, running: false });
 */
export type Assessment =
  | Omit<RevivableInspection, 'path' | 'bytes'>
  | Omit<NotRevivableInspection, 'path' | 'bytes'>;

/**
 * Decide, from a transcript's folded state, whether it is revivable and how it was left. Pure.
 * `running` is the caller's to know (a lock probe), and precedes everything decided here.
 *
 * @example
 * const assessment = assessTail(session.state, { maxRevivals: 2, running: false });
 * if (!assessment.revivable) console.log(assessment.reason, assessment.detail);
 */
export function assessTail(
  state: TailState,
  context: { maxRevivals: number; running: boolean; runningDetail?: string },
): Assessment {
  const { maxRevivals } = context;
  const assessment: Omit<InspectionFacts, 'path' | 'bytes'> = {
    revivalsUsed: state.revivals,
    maxRevivals,
    openDispatches: state.open,
    neverDispatched: neverDispatchedCalls(state),
    pendingJoins: pendingJoins(state),
    messages: state.messages,
    estimatedTokens: Math.ceil(state.messageBytes / 4),
  };
  if (state.meta !== null) {
    assessment.agentId = state.meta.agentId;
    assessment.agentType = state.meta.agentType;
    assessment.label = state.meta.label;
    if (state.meta.parent !== undefined) assessment.parent = state.meta.parent;
  }
  if (state.halt !== null) assessment.halt = state.halt;
  const refusal = refusalOf(state, context);
  if (refusal !== null) return { ...assessment, revivable: false, ...refusal };
  return { ...assessment, revivable: true, tail: tailKind(state) };
}

function refusalOf(
  state: TailState,
  context: { maxRevivals: number; running: boolean; runningDetail?: string },
): { reason: NotRevivableReason; detail: string } | null {
  if (context.running) {
    return {
      reason: 'running',
      detail: context.runningDetail ?? 'a live process holds the writer lock',
    };
  }
  const last = state.lastMessage;
  if (last?.role === 'assistant' && last.calls.length === 0) {
    return {
      reason: 'finished',
      detail: `the last message (seq ${last.seq}) is an assistant turn asking for no tools`,
    };
  }
  if (state.revivals >= context.maxRevivals) {
    return {
      reason: 'revival-cap',
      detail:
        context.maxRevivals === 0
          ? 'revival is turned off (maxRevivals 0)'
          : `revived ${state.revivals} time(s) already; the cap is ${context.maxRevivals}`,
    };
  }
  if (state.conversationMessages === 0) {
    return {
      reason: 'empty',
      detail: `no conversation to carry on (${state.records} record(s), no user, assistant or tool turn)`,
    };
  }
  return null;
}

/**
 * How the run was left; only meaningful for a transcript that is neither finished nor empty.
 * Pure.
 *
 * @example
 * tailKind(session.state); // 'calls-unanswered'
 */
export function tailKind(state: TailState): TailKind {
  const unanswered = state.turn?.calls.some((call) => !call.answered) === true;
  if (unanswered) return 'calls-unanswered';
  return state.lastMessage?.role === 'tool' ? 'results-unread' : 'user-turn';
}

function neverDispatchedCalls(state: TailState): NeverDispatchedCall[] {
  return (state.turn?.calls ?? [])
    .filter((call) => !call.dispatched && !call.answered)
    .map((call) => ({ callId: call.callId, toolName: call.toolName }));
}

function pendingJoins(state: TailState): PendingJoin[] {
  const joins: PendingJoin[] = [];
  for (const dispatch of state.open) {
    if (dispatch.joins === undefined) continue;
    if (dispatch.resultSeq !== undefined || dispatch.turnCompacted === true) continue;
    joins.push({ callId: dispatch.callId, agentIds: dispatch.joins });
  }
  return joins;
}
