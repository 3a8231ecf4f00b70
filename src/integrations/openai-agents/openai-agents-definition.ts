import type { LanguageModelV4 } from '@ai-sdk/provider';
import { type Agent, type AgentOutputType, run, type Runner } from '@openai/agents';
import type { AgentDefinition } from '../../subagents/agent-definition.ts';
import { runAsLoop } from '../ai-sdk/run-as-loop.ts';
import { transcriptSessionOver } from './transcript-session.ts';

/**
 * An agent type for an `--agents` module (and a `Composer`) whose runs are an OpenAI Agents JS
 * `Agent` — built with {@link revivableAgentsModel} and {@link revivableFunctionTools} — run
 * by `run(agent, [], { session })` over the run's transcript instead of a Loop: `llm-agent
 * revive` carries a crashed run of it on with the same agent (its calls in flight answered as
 * interrupted, never run again), `llm-agent run` starts one, `status` and `ui` show it. The
 * registry's key is the run's agent type (`TranscriptSession.open`'s `agentType`, by default
 * its `agentId`). `runner` runs it instead of the SDK's default runner (a model provider of
 * your own); `maxTurns` is handed to it. The transcript's `session-meta` of a run it starts
 * names the model `openai-agents:<the agent's model name, or its name>`. Such a run spawns no
 * children through `spawn_agent` (its tools are the agent's).
 *
 * @example
 * import { Agent, OpenAIProvider } from '@openai/agents';
 * import { openaiAgentsDefinition, revivableAgentsModel, revivableFunctionTools } from 'llm-agent-revival/openai-agents';
 * const agent = new Agent({ name: 'mailer', model: revivableAgentsModel(await new OpenAIProvider().getModel('gpt-5-mini')), tools: revivableFunctionTools([]) });
 * export default { mailer: openaiAgentsDefinition(agent, { description: 'Sends reports' }) };
 */
export function openaiAgentsDefinition<TContext, TOutput extends AgentOutputType>(
  agent: Agent<TContext, TOutput>,
  options: { description: string; runner?: Pick<Runner, 'run'>; maxTurns?: number },
): AgentDefinition {
  const runner = options.runner ?? { run };
  return {
    description: options.description,
    model: placeholderModel(
      typeof agent.model === 'string' && agent.model !== '' ? agent.model : agent.name,
    ),
    system: '',
    canSpawn: false,
    createLoop: (loopOptions) => ({
      run: (messages) =>
        runAsLoop(loopOptions, messages, async (recorder, signal) => {
          // The conversation, its revival's answers and notice included, is all in the session.
          const result = await runner.run(agent, [], {
            session: transcriptSessionOver(recorder),
            signal,
            ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
          });
          const output: unknown = result.finalOutput;
          return {
            text: typeof output === 'string' ? output : JSON.stringify(output ?? ''),
            finishReason: 'stop',
            totalUsage: result.state.usage,
          };
        }),
    }),
  };
}

/**
 * The model an agent type must name: never called (the agent's own model runs), it says in
 * the transcript and in `status` which agent ran.
 */
function placeholderModel(name: string): LanguageModelV4 {
  const refuse = (): never => {
    throw new TypeError(
      'openaiAgentsDefinition: the agent runs its own model; this placeholder is never called',
    );
  };
  return {
    specificationVersion: 'v4',
    provider: 'openai-agents',
    modelId: name,
    supportedUrls: {},
    doGenerate: async () => refuse(),
    doStream: async () => refuse(),
  };
}
