import { isAgentId, type Message } from '../transcript/records.ts';
import type { AgentIdFactory } from './agent-id.ts';
import { type DeliveredChild, reportedAgentIds, SPAWN_AGENT_TOOL } from './join-output.ts';

/**
 * The children a conversation's `spawn_agent` calls started (or may have: a call's result may
 * have been lost in a crash) that it has not heard the end of and that no pending join names —
 * the children a revived parent must still be told about. Each with whether the conversation
 * knows its id (a `spawn_agent` result named it). Calls whose input names no agent type, or
 * whose id `ids` cannot make safely, are left out. Pure.
 *
 * @example
 * for (const { child, idKnown } of unheardChildren({ messages, pendingJoins: [], ids: agentIdForSpawn, parentAgentId: 'main' })) console.log(child.agentId, idKnown);
 */
export function unheardChildren(request: {
  messages: readonly Message[];
  /** Agent ids named by the parent's open joins: the joins answer for them. */
  pendingJoins: readonly string[];
  ids: AgentIdFactory;
  parentAgentId: string;
}): { child: DeliveredChild; idKnown: boolean }[] {
  const { messages } = request;
  const reported = reportedAgentIds(messages);
  const pending = new Set(request.pendingJoins);
  const named = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.isError) continue;
      const output = part.output;
      if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
        if (typeof output.agentId === 'string') named.set(part.callId, output.agentId);
      }
    }
  }
  const found: { child: DeliveredChild; idKnown: boolean }[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-call' || part.toolName !== SPAWN_AGENT_TOOL) continue;
      const input = part.input;
      if (typeof input !== 'object' || input === null || Array.isArray(input)) continue;
      if (typeof input.agentType !== 'string') continue;
      let agentId: string;
      try {
        agentId = request.ids({
          agentType: input.agentType,
          callId: part.callId,
          parentAgentId: request.parentAgentId,
        });
      } catch {
        continue;
      }
      if (!isAgentId(agentId) || reported.has(agentId) || pending.has(agentId)) continue;
      const label = typeof input.label === 'string' ? input.label : input.agentType;
      found.push({
        child: { agentId, agentType: input.agentType, label, callId: part.callId },
        idKnown: named.get(part.callId) === agentId,
      });
    }
  }
  return found;
}
