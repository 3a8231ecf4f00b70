import { z } from 'zod';
import type { ToolContext, ToolDefinition, ToolFailure } from '../loop/types.ts';
import type { JsonValue } from '../transcript/records.ts';
import type { AgentRegistry } from './agent-definition.ts';
import { SPAWN_AGENT_TOOL, TASK_WAIT_TOOL } from './join-output.ts';

/**
 * What a model passes to `spawn_agent`.
 *
 * @example
 * const input: SpawnInput = { agentType: 'researcher', task: 'Find the release date', label: 'dates' };
 */
export interface SpawnInput {
  agentType: string;
  task: string;
  label?: string | undefined;
}

const spawnInputSchema = z.object({
  agentType: z.string().min(1).describe('Which kind of agent to start (one of the types listed).'),
  task: z.string().min(1).describe('The whole task, self-contained: the child sees nothing else.'),
  label: z.string().max(200).optional().describe('A short name for this child, for people.'),
});

/**
 * The `spawn_agent` tool over a composer's `spawn`: schema and description (listing the
 * registry's types). It is a `side-effect` call: a child started is never started again by a
 * replay, and revival answers an interrupted one as interrupted.
 *
 * @example
 * // A Composer gives its runs this tool over its own spawn; elsewhere, bring yours:
 * const tool = spawnAgentTool(registry, async ({ agentType, task }) => ({ started: agentType, task }));
 */
export function spawnAgentTool(
  registry: AgentRegistry,
  spawn: (input: SpawnInput, context: ToolContext) => Promise<JsonValue | ToolFailure>,
): ToolDefinition<SpawnInput> {
  const types = Object.entries(registry)
    .map(([name, definition]) => `- ${name}: ${definition.description}`)
    .join('\n');
  return {
    name: SPAWN_AGENT_TOOL,
    description: `Start a child agent on a task in the background. Returns its agent id at once; the child works while you continue. Join it with ${TASK_WAIT_TOOL} to get its final answer; a child you do not wait for has its result delivered to you when it ends.\nAgent types:\n${types}`,
    inputSchema: spawnInputSchema,
    idempotency: 'side-effect',
    execute: spawn,
  };
}
