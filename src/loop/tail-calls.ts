import type { ToolCallPart } from '../transcript/records.ts';
import type { TailState } from '../transcript/tail-state.ts';
import { callsOf } from './model-messages.ts';
import type { LoopMessage } from './types.ts';

/**
 * The state of one call of the last assistant turn when a run starts or goes round again
 * (the seed's "three states of a tool-call tail", plus the two a loop must refuse):
 * - `answered`: a result is in the conversation — nothing to do;
 * - `not-yet-run`: never dispatched — dispatch and run it now (not a retry: it never started);
 * - `pending-again`: an open join (a `task_wait` dispatched, never settled) — wait for its
 *   children under the same call id, without a second dispatch;
 * - `in-flight`: dispatched, never settled, no result, not a join — a process died with the tool
 *   running and nobody revived the transcript; only revival may answer it (honestly);
 * - `settled-unanswered`: settled without a result in the conversation — the view is not the
 *   transcript's (say, a caller passed the wrong messages).
 *
 * @example
 * for (const entry of classifyTailCalls(messages, session.state)) {
 *   if (entry.state === 'pending-again') console.log('waiting for', entry.agentIds);
 * }
 */
export type TailCallState =
  | { state: 'answered'; call: ToolCallPart }
  | { state: 'not-yet-run'; call: ToolCallPart }
  | { state: 'pending-again'; call: ToolCallPart; agentIds: string[] }
  | { state: 'in-flight'; call: ToolCallPart }
  | { state: 'settled-unanswered'; call: ToolCallPart };

/**
 * Sort the calls of the conversation's last assistant turn into their states, from the
 * conversation (which results exist) and the session's folded tail state (which dispatches are
 * open, and which calls of the transcript's last turn were dispatched). Pure.
 *
 * @example
 * const calls = classifyTailCalls(messages, session.state);
 * const toRun = calls.filter((entry) => entry.state === 'not-yet-run');
 */
export function classifyTailCalls(
  messages: readonly LoopMessage[],
  state: TailState,
): TailCallState[] {
  let turnIndex = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]?.role === 'assistant') {
      turnIndex = index;
      break;
    }
  }
  const turn = messages[turnIndex];
  if (turn === undefined) return [];
  const answered = new Set<string>();
  for (const message of messages.slice(turnIndex + 1)) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result') answered.add(part.callId);
    }
  }
  const open = new Map(state.open.map((dispatch) => [dispatch.callId, dispatch]));
  // The transcript's last turn (followed by nothing but its results) says what was dispatched.
  const lastTurn =
    state.lastMessage?.role === 'assistant' || state.lastMessage?.role === 'tool'
      ? state.lastMessage
      : null;
  return callsOf(turn).map((call): TailCallState => {
    if (answered.has(call.callId)) return { state: 'answered', call };
    const dispatch = open.get(call.callId);
    if (dispatch !== undefined) {
      return dispatch.joins === undefined
        ? { state: 'in-flight', call }
        : { state: 'pending-again', call, agentIds: dispatch.joins };
    }
    const known = lastTurn?.calls.find((entry) => entry.callId === call.callId);
    if (known?.dispatched === true) return { state: 'settled-unanswered', call };
    return { state: 'not-yet-run', call };
  });
}
