import type { JsonObject, JsonValue, Message } from '../transcript/records.ts';
import { BACKGROUND_FRAME } from './background-frame.ts';
import type { ChildOutcome } from './child-outcome.ts';

/**
 * The name of the tool that starts a child.
 *
 * @example
 * const spawns = messages.flatMap((message) => message.content).filter((part) => part.type === 'tool-call' && part.toolName === SPAWN_AGENT_TOOL);
 */
export const SPAWN_AGENT_TOOL = 'spawn_agent';
/**
 * The name of the tool that joins children (a join: its dispatch names them).
 *
 * @example
 * const joins = messages.flatMap((message) => message.content).filter((part) => part.type === 'tool-call' && part.toolName === TASK_WAIT_TOOL);
 */
export const TASK_WAIT_TOOL = 'task_wait';

/**
 * One child as a join reports it.
 *
 * @example
 * const joined: JoinedChild = { agentId: 'a', outcome: { status: 'finished', answer: '42' } };
 */
export interface JoinedChild {
  agentId: string;
  outcome: ChildOutcome;
}

/**
 * What a join (`task_wait`, or a pending join answered after a revival) returns to the model:
 * each named child's answer or failure, and which are still running when it timed out. It is
 * an error result only when no named child gave an answer.
 *
 * @example
 * joinOutput([{ agentId: 'a', outcome: { status: 'finished', answer: '42' } }], []);
 * // { output: { results: [{ agentId: 'a', status: 'finished', answer: '42' }] }, isError: false }
 */
export function joinOutput(
  joined: readonly JoinedChild[],
  stillRunning: readonly string[],
): { output: JsonValue; isError: boolean } {
  const results = joined.map(({ agentId, outcome }): JsonObject => ({ agentId, ...outcome }));
  const output: JsonObject = { results };
  if (stillRunning.length > 0) {
    output.stillRunning = [...stillRunning];
    output.note =
      'The children in stillRunning have not ended yet. Their results will be delivered to you when they end, or call task_wait again.';
  }
  const answered = joined.some(({ outcome }) => outcome.status === 'finished');
  return { output, isError: !answered && stillRunning.length === 0 };
}

/**
 * Who a background delivery is about.
 *
 * @example
 * const child: DeliveredChild = { agentId: 'a', agentType: 'worker', label: 'a', callId: 'call_1' };
 */
export interface DeliveredChild {
  agentId: string;
  agentType: string;
  label: string;
  /** The spawn call that started the child. */
  callId: string;
}

/**
 * The user turn that tells a parent how a child ended while nobody waited for it. It opens
 * with {@link BACKGROUND_FRAME}; `extras.injected` is `background` and `extras.agentId` names
 * the child, so that a revived parent can tell which children it has already heard from.
 *
 * @example
 * const turn = backgroundDelivery(
 *   { agentId: 'a', agentType: 'researcher', label: 'prices', callId: 'call_1' },
 *   { status: 'finished', answer: '42' },
 * );
 */
export function backgroundDelivery(child: DeliveredChild, outcome: ChildOutcome): Message {
  const who = `The child agent ${child.agentId} (type ${child.agentType}, label ${JSON.stringify(child.label)}, started by your ${SPAWN_AGENT_TOOL} call ${child.callId})`;
  const text =
    outcome.status === 'finished'
      ? `${BACKGROUND_FRAME} ${who} has finished. Its final answer:\n\n${outcome.answer}`
      : `${BACKGROUND_FRAME} ${who} ended without a final answer (${outcome.reason}): ${outcome.detail}${
          outcome.answer === undefined ? '' : `\n\nIts last text:\n\n${outcome.answer}`
        }`;
  return {
    role: 'user',
    content: [{ type: 'text', text }],
    extras: { injected: 'background', agentId: child.agentId, outcome: outcome.status },
  };
}

/**
 * The user turn that tells a revived parent about a child whose `spawn_agent` result was lost
 * in the crash (the call was answered as interrupted) but which exists and is running again:
 * without it the parent would not know the child's id to join it.
 *
 * @example
 * const turn = runningAgainNotice({ agentId: 'a', agentType: 'researcher', label: 'x', callId: 'c' });
 */
export function runningAgainNotice(child: DeliveredChild): Message {
  const text = `${BACKGROUND_FRAME} Your ${SPAWN_AGENT_TOOL} call ${child.callId} did start a child before the interruption: agent ${child.agentId} (type ${child.agentType}, label ${JSON.stringify(child.label)}). It is running again. Join it with ${TASK_WAIT_TOOL}, or its result will be delivered to you when it ends.`;
  return {
    role: 'user',
    content: [{ type: 'text', text }],
    extras: { injected: 'background', agentId: child.agentId, outcome: 'running' },
  };
}

/**
 * The agent ids whose outcome a conversation already holds: named in a `task_wait` result as
 * finished or failed, or delivered in the background. A revived parent is not told them again.
 *
 * @example
 * reportedAgentIds(messages).has('researcher-call_1');
 */
export function reportedAgentIds(messages: readonly Message[]): Set<string> {
  const reported = new Set<string>();
  for (const message of messages) {
    const extras = message.extras;
    if (
      extras?.injected === 'background' &&
      typeof extras.agentId === 'string' &&
      extras.outcome !== 'running'
    ) {
      reported.add(extras.agentId);
    }
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.toolName !== TASK_WAIT_TOOL) continue;
      for (const agentId of joinedIdsOf(part.output)) reported.add(agentId);
    }
  }
  return reported;
}

function joinedIdsOf(output: JsonValue): string[] {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return [];
  const results = output.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((item) =>
    typeof item === 'object' &&
    item !== null &&
    !Array.isArray(item) &&
    typeof item.agentId === 'string'
      ? [item.agentId]
      : [],
  );
}
