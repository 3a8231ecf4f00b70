import { isAgentId } from '../transcript/records.ts';
import type { AgentDefinition, AgentRegistry } from './agent-definition.ts';
import type { AgentIdFactory } from './agent-id.ts';
import { describeError } from '../transcript/transcript-error.ts';

/**
 * What a spawn may do, decided before anything is written.
 *
 * @example
 * if (!plan.ok) return { isError: true, output: plan.refusal };
 */
export type SpawnPlan =
  | { ok: true; agentId: string; definition: AgentDefinition; label: string }
  | { ok: false; refusal: string };

/**
 * Decide a spawn: the agent type must be in the registry, the parent below the depth limit,
 * the id (made by `ids` from the spawn call) safe as a file name. Pure apart from calling
 * `ids`; never throws. A refusal is text the model reads.
 *
 * @example
 * const plan = planSpawn({ registry, ids: agentIdForSpawn, maxDepth: 2, parentDepth: 0,
 *   parentAgentId: 'main', callId: 'call_1', input: { agentType: 'researcher', task: '…' } });
 */
export function planSpawn(request: {
  registry: AgentRegistry;
  ids: AgentIdFactory;
  maxDepth: number;
  parentDepth: number;
  parentAgentId: string;
  callId: string;
  input: { agentType: string; label?: string | undefined };
}): SpawnPlan {
  const { registry, input } = request;
  const definition = Object.hasOwn(registry, input.agentType)
    ? registry[input.agentType]
    : undefined;
  if (definition === undefined) {
    return {
      ok: false,
      refusal: `Unknown agent type ${JSON.stringify(input.agentType)}. The types are: ${Object.keys(registry).join(', ')}.`,
    };
  }
  if (request.parentDepth + 1 > request.maxDepth) {
    return {
      ok: false,
      refusal: `Cannot spawn: this run is at depth ${request.parentDepth} and the maximum depth is ${request.maxDepth}.`,
    };
  }
  let agentId: unknown;
  try {
    agentId = request.ids({
      agentType: input.agentType,
      callId: request.callId,
      parentAgentId: request.parentAgentId,
    });
  } catch (error) {
    return { ok: false, refusal: `Cannot make an agent id for this call: ${describeError(error)}` };
  }
  if (typeof agentId !== 'string' || !isAgentId(agentId)) {
    return {
      ok: false,
      refusal: `The agent id ${JSON.stringify(agentId)} made for this call is not safe as a file name; nothing was started.`,
    };
  }
  return { ok: true, agentId, definition, label: input.label ?? input.agentType };
}
