/**
 * The `--agents` module `llm-agent revive` carries the crashed OpenAI Agents program on with:
 * the program's own mailer Agent (openaiAgentsDefinition), under the run's agent type `main`.
 */
import { openaiAgentsDefinition } from '../../../src/integrations/openai-agents/index.ts';
import type { AgentRegistry } from '../../../src/subagents/agent-definition.ts';
import { mailerAgent } from './agents-crash-program.ts';
import { phaseOf } from './crash-program.ts';

export default (context: { transcript: string; env: NodeJS.ProcessEnv }): AgentRegistry => ({
  main: openaiAgentsDefinition(mailerAgent(context.transcript, phaseOf(context.env)), {
    description: 'Sends reports',
  }),
});
