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

/** What a run's end says: `generateText`'s result, or `generate`'s. */
interface ProgramAnswer {
  text: string;
  finishReason: string;
  totalUsage?: { inputTokens?: number | undefined; outputTokens?: number | undefined };
}

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
      run: (messages) => runProgram(program, loopOptions, messages),
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

/** Say in the transcript that the run was stopped, as the Loop does; a failed write loses only this. */
async function recordStop(options: LoopOptions, reason: unknown): Promise<void> {
  const text = (reason instanceof Error ? reason.message : String(reason ?? 'aborted')).slice(
    0,
    500,
  );
  try {
    await options.session.append({ type: 'run-stopped', reason: text || 'aborted' });
    await options.session.barrier();
  } catch {
    // The transcript then reads as a run whose process died, which revives the same way.
  }
}

/** Run the program over `messages` as a Loop's run would: a handle that never rejects. */
function runProgram(
  program: AiSdkProgram,
  options: LoopOptions,
  messages: readonly LoopMessage[],
): RunHandle {
  const controller = new AbortController();
  const channel = new RunChannel(controller);
  const session = options.session;
  void (async () => {
    let result: RunResult;
    try {
      const recorder = new RunRecorder(session, messages);
      await recorder.answerNeverStarted(recorder.unansweredCalls());
      const answer = await withRecorder(recorder, () =>
        answerOf(program({ messages: recorder.modelMessages, abortSignal: controller.signal })),
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
