import type { LanguageModel, ModelMessage } from 'ai';
import type { AgentDefinition } from '../../subagents/agent-definition.ts';
import { type ProgramAnswer, runAsLoop } from './run-as-loop.ts';

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
 * A `streamText` or `generateText` program as a function of the conversation to continue
 * from: what {@link aiSdkAgentDefinition} takes when there is no agent object. It is called
 * with the messages and the run's abort signal, and returns what `streamText` returns (its
 * `text`, `finishReason` and `totalUsage` are awaited, which reads the stream to its end) or
 * what `generateText` returns.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { stepCountIs, streamText } from 'ai';
 * import { type AiSdkProgram, revivableModel, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const model = revivableModel(openai('gpt-5-mini'));
 * const tools = revivableTools({});
 * const program: AiSdkProgram = ({ messages, abortSignal }) =>
 *   streamText({ model, tools, messages, abortSignal, stopWhen: stepCountIs(10) });
 */
export type AiSdkProgram = (options: {
  messages: ModelMessage[];
  abortSignal: AbortSignal;
}) => PromiseLike<ProgramAnswer> | StreamedAnswer;

/** What `streamText` returns, as far as a run's end needs it. */
interface StreamedAnswer {
  text: PromiseLike<string>;
  finishReason: PromiseLike<string>;
  totalUsage: PromiseLike<{ inputTokens?: number | undefined; outputTokens?: number | undefined }>;
}

/**
 * An agent type for an `--agents` module (and a `Composer`) whose runs are an AI SDK program —
 * a `ToolLoopAgent` built with {@link revivableModel} and {@link revivableTools}, or a
 * `streamText` / `generateText` call with them ({@link AiSdkProgram}) — instead of a Loop:
 * `llm-agent run` starts it, `llm-agent revive` carries a crashed run of it on with the same
 * agent, `status` and `ui` show it. `model` is recorded in the transcript for people (pass the
 * model the agent was given); the agent's own model is what runs. Such a run spawns no
 * children through `spawn_agent` (its tools are the agent's).
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
  agent: GeneratingAgent | AiSdkProgram,
  options: { description: string; model: LanguageModel },
): AgentDefinition {
  const program: AiSdkProgram =
    typeof agent === 'function' ? agent : (input) => agent.generate(input);
  return {
    description: options.description,
    model: options.model,
    system: '',
    canSpawn: false,
    createLoop: (loopOptions) => ({
      run: (messages) =>
        runAsLoop(loopOptions, messages, (recorder, abortSignal) =>
          answerOf(program({ messages: recorder.modelMessages, abortSignal })),
        ),
    }),
  };
}

/** The end of a program's run: a streamed one read to its end. */
async function answerOf(
  result: PromiseLike<ProgramAnswer> | StreamedAnswer,
): Promise<ProgramAnswer> {
  if ('then' in result && typeof result.then === 'function') return await result;
  const streamed = result as StreamedAnswer;
  const [text, finishReason, totalUsage] = await Promise.all([
    streamed.text,
    streamed.finishReason,
    streamed.totalUsage,
  ]);
  return { text, finishReason, totalUsage };
}
