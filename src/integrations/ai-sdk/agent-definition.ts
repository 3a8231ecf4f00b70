import type { LanguageModel, ModelMessage } from 'ai';
import type { LoopMessage, LoopOptions, RunHandle, RunResult } from '../../loop/types.ts';
import { RunChannel } from '../../loop/run-handle.ts';
import type { AgentDefinition } from '../../subagents/agent-definition.ts';
import { RunRecorder, withRecorder } from './run-recorder.ts';

/**
 * What {@link aiSdkAgentDefinition} needs of an AI SDK agent: the `Agent` interface's
 * `generate` (a `ToolLoopAgent` has it), called with the messages to continue from.
 *
 * @example
 * import { ToolLoopAgent } from 'ai';
 * import type { GeneratingAgent } from 'llm-agent-revival/ai-sdk';
 * const agent: GeneratingAgent = new ToolLoopAgent({ model });
 */
export interface GeneratingAgent {
  readonly version: 'agent-v1';
  generate(options: { messages: ModelMessage[]; abortSignal?: AbortSignal }): PromiseLike<{
    text: string;
    finishReason: string;
    totalUsage?: { inputTokens?: number | undefined; outputTokens?: number | undefined };
  }>;
}

/**
 * An agent type for an `--agents` module (and a `Composer`) whose runs are an AI SDK agent —
 * a `ToolLoopAgent` built with {@link revivableModel} and {@link revivableTools} — instead of a
 * Loop: `llm-agent run` starts it, `llm-agent revive` carries a crashed run of it on with the
 * same agent, `status` and `ui` show it. `model` is recorded in the transcript for people
 * (pass the model the agent was given); the agent's own model is what runs. Such a run spawns
 * no children through `spawn_agent` (its tools are the agent's).
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { ToolLoopAgent } from 'ai';
 * import { aiSdkAgentDefinition, revivableModel, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const model = openai('gpt-5-mini');
 * export const agent = new ToolLoopAgent({ model: revivableModel(model), tools: revivableTools({}) });
 * export default { main: aiSdkAgentDefinition(agent, { description: 'Answers questions', model }) };
 */
export function aiSdkAgentDefinition(
  agent: GeneratingAgent,
  options: { description: string; model: LanguageModel },
): AgentDefinition {
  return {
    description: options.description,
    model: options.model,
    system: '',
    canSpawn: false,
    createLoop: (loopOptions) => ({ run: (messages) => runAgent(agent, loopOptions, messages) }),
  };
}

/** Say in the transcript that the run was stopped, as the Loop does; a failed write loses only this. */
async function recordStop(options: LoopOptions, reason: unknown): Promise<void> {
  const text = (reason instanceof Error ? reason.message : String(reason ?? 'aborted')).slice(
    0,
    500,
  );
  try {
    await options.writer.append({ type: 'run-stopped', reason: text || 'aborted' });
    await options.writer.barrier();
  } catch {
    // The transcript then reads as a run whose process died, which revives the same way.
  }
}

/** Run the agent over `messages` as a Loop's run would: a handle that never rejects. */
function runAgent(
  agent: GeneratingAgent,
  options: LoopOptions,
  messages: readonly LoopMessage[],
): RunHandle {
  const controller = new AbortController();
  const channel = new RunChannel(controller);
  const session = options.writer;
  void (async () => {
    let result: RunResult;
    try {
      const recorder = new RunRecorder(session, messages);
      await recorder.answerNeverStarted(recorder.unansweredCalls());
      const answer = await withRecorder(recorder, () =>
        agent.generate({ messages: recorder.modelMessages, abortSignal: controller.signal }),
      );
      result = {
        status: 'finished',
        text: answer.text,
        usage: {
          inputTokens: answer.totalUsage?.inputTokens ?? 0,
          outputTokens: answer.totalUsage?.outputTokens ?? 0,
        },
        stopReason: answer.finishReason,
      };
    } catch (error) {
      const aborted = controller.signal.aborted;
      if (aborted) await recordStop(options, controller.signal.reason);
      result = {
        status: aborted ? 'aborted' : 'failed',
        text: '',
        usage: { inputTokens: 0, outputTokens: 0 },
        stopReason: aborted ? 'aborted' : 'error',
        ...(aborted ? {} : { error: error instanceof Error ? error.message : String(error) }),
      };
    }
    channel.end(result);
  })();
  return channel.handle;
}
