import { z } from 'zod';
import type { ToolContext, ToolDefinition, ToolFailure } from '../loop/types.ts';
import type { JsonValue } from '../transcript/records.ts';
import { SPAWN_AGENT_TOOL, TASK_WAIT_TOOL } from './join-output.ts';

/**
 * What a model passes to `task_wait`.
 *
 * @example
 * const input: TaskWaitInput = { agentIds: ['researcher-call_1'], timeoutSeconds: 60 };
 */
export interface TaskWaitInput {
  agentIds: string[];
  timeoutSeconds?: number | undefined;
}

const taskWaitInputSchema = z.object({
  agentIds: z.array(z.string()).min(1).max(64).describe('The ids spawn_agent returned.'),
  timeoutSeconds: z
    .number()
    .min(0)
    .max(86_400)
    .optional()
    .describe('Stop waiting after this long; the result names the children still running.'),
});

/**
 * The `task_wait` tool over a composer's `wait`: a join. Its dispatch records the awaited
 * agent ids (`joins`), which is what lets a revived parent wait for the same children again
 * under the same call id. It only reads: `read-only`.
 *
 * @example
 * // A Composer gives its runs this tool over its own wait; elsewhere, bring yours:
 * const tool = taskWaitTool(async ({ agentIds }) => ({ stillRunning: agentIds }));
 */
export function taskWaitTool(
  wait: (input: TaskWaitInput, context: ToolContext) => Promise<JsonValue | ToolFailure>,
): ToolDefinition<TaskWaitInput> {
  return {
    name: TASK_WAIT_TOOL,
    description: `Wait for child agents started with ${SPAWN_AGENT_TOOL} to end, and get each one's final answer or failure. With timeoutSeconds, returns when it runs out, naming the children still running.`,
    inputSchema: taskWaitInputSchema,
    idempotency: 'read-only',
    execute: wait,
    joins: (input) => input.agentIds,
  };
}
