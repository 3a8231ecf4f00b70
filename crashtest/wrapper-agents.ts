import { dirname, join } from 'node:path';
import { MockLanguageModelV4 } from 'ai/test';
import { aiSdkAgentDefinition } from '../src/integrations/ai-sdk/index.ts';
import { openaiAgentsDefinition } from '../src/integrations/openai-agents/index.ts';
import type { AgentRegistry } from '../src/subagents/agent-definition.ts';
import { reportAgent } from './ai-sdk-program.ts';
import { mailerAgent } from './openai-agents-program.ts';

/*
 * The `--agents` module a wrapper part's `llm-agent revive` carries a killed run on with: the
 * same program's agent (WRAPPER_PROGRAM=ai-sdk: the ToolLoopAgent through aiSdkAgentDefinition;
 * openai-agents: the OpenAI Agents JS Agent through openaiAgentsDefinition), its tool starts
 * logged beside the transcript as the killed process logged them.
 */

/**
 * The pairing problems of what each transcript's model was sent, by transcript: the harness
 * runs the command in its own process, and reads them here.
 *
 * @example
 * const problems = problemsByTranscript.get('/tmp/kill-3/main.jsonl') ?? [];
 */
export const problemsByTranscript = new Map<string, string[]>();

export default (context: { transcript: string; env: NodeJS.ProcessEnv }): AgentRegistry => {
  const executions = join(dirname(context.transcript), 'executions.log');
  const problems = problemsByTranscript.get(context.transcript) ?? [];
  problemsByTranscript.set(context.transcript, problems);
  if (context.env.WRAPPER_PROGRAM === 'openai-agents') {
    return {
      main: openaiAgentsDefinition(mailerAgent(executions, problems), {
        description: 'Sends reports',
      }),
    };
  }
  // The agent's own (wrapped) model runs; this one is only named in the transcript.
  const named = new MockLanguageModelV4();
  return {
    main: aiSdkAgentDefinition(reportAgent(executions, problems), {
      description: 'Sends reports',
      model: named,
    }),
  };
};
