import type { Tool } from '@openai/agents';
import type { ToolIdempotency } from '../../loop/tool-set.ts';
import { IDEMPOTENCIES } from '../../transcript/records.ts';
import { recordedCallKey } from '../ai-sdk/call-idempotency-key.ts';
import { currentRecorder } from '../ai-sdk/run-recorder.ts';
import { rememberCallKey } from './function-tool-idempotency-key.ts';

/**
 * The same OpenAI Agents tools, each function tool's `invoke` wrapped with the write-ahead
 * rule: its dispatch durable in the current run's transcript before the tool runs, its result
 * durable before the runner gets it. `idempotency` says, by name, what running each tool twice
 * would do (`side-effect` when not named, recorded as undeclared). Other tools (hosted, computer, shell) are refused:
 * their results do not pass through the process. A run aborted while the tool ran leaves the
 * dispatch open, for revival to answer as interrupted. Each call's idempotency key is recorded in
 * its dispatch; the tool reads it with `functionToolIdempotencyKey(details)`.
 *
 * @example
 * import { tool } from '@openai/agents';
 * import { revivableFunctionTools } from 'llm-agent-revival/openai-agents';
 * import { z } from 'zod';
 * const send = tool({ name: 'send', description: 'Send a report', parameters: z.object({ to: z.string() }),
 *   execute: async ({ to }) => `sent to ${to}` });
 * const tools = revivableFunctionTools([send], { idempotency: { send: 'side-effect' } });
 */
export function revivableFunctionTools<T extends Tool<never>>(
  tools: readonly T[],
  options: { idempotency?: ToolIdempotency } = {},
): T[] {
  const idempotency = options.idempotency ?? {};
  const names = new Set(tools.map((tool) => tool.name));
  for (const [name, value] of Object.entries(idempotency)) {
    if (!names.has(name))
      throw new TypeError(
        `revivableFunctionTools: idempotency names "${name}", which is not a tool`,
      );
    if (!IDEMPOTENCIES.includes(value)) {
      throw new TypeError(
        `revivableFunctionTools: tool "${name}" has idempotency ${JSON.stringify(value)}; it must be one of ${IDEMPOTENCIES.join(', ')}`,
      );
    }
  }
  return tools.map((tool) => {
    if (tool.type !== 'function') {
      throw new TypeError(
        `revivableFunctionTools: tool "${tool.name}" is a ${tool.type} tool: only function tools run in this process, where their calls can be recorded`,
      );
    }
    const invoke = tool.invoke;
    const declared = idempotency[tool.name]; // undefined: side-effect, undeclared
    const wrapped: typeof tool = {
      ...tool,
      invoke: async (runContext, input, details) => {
        const recorder = currentRecorder(`tool "${tool.name}"`);
        const callId = details?.toolCall?.callId;
        if (callId === undefined) {
          throw new TypeError(
            `tool "${tool.name}": invoked without its call, so its dispatch cannot be recorded`,
          );
        }
        // The key is recorded in the dispatch before the tool starts; the tool gets that key.
        const idempotencyKey = recordedCallKey(recorder, callId);
        const call = await recorder.dispatch(
          callId,
          tool.name,
          declared,
          undefined,
          idempotencyKey,
        );
        if (details?.toolCall !== undefined) rememberCallKey(details.toolCall, idempotencyKey);
        let result: Awaited<ReturnType<typeof invoke>>;
        try {
          result = await invoke(runContext, input, details);
        } catch (error) {
          if (details?.signal?.aborted !== true) {
            await recorder.settle(
              call,
              error instanceof Error ? error.message : String(error),
              true,
            );
          }
          throw error;
        }
        await recorder.settle(
          call,
          typeof result === 'string' ? result : JSON.stringify(result),
          false,
        );
        return result;
      },
    };
    return wrapped as T;
  });
}
