/**
 * The `--agents` module `llm-agent revive` carries the crashed programs on with: `agent` is the
 * program's ToolLoopAgent, `stream-text` its streamText call (aiSdkAgentDefinition of each),
 * `loop` our Loop with the same tool().
 */
import { aiSdkAgentDefinition } from '../../../src/integrations/ai-sdk/index.ts';
import type { AgentRegistry } from '../../../src/subagents/agent-definition.ts';
import { phaseOf, programAgent, programStream, scriptedModel, sendTool } from './crash-program.ts';

export default (context: { transcript: string; env: NodeJS.ProcessEnv }): AgentRegistry => {
  const phase = phaseOf(context.env);
  const model = scriptedModel(phase, `${context.transcript}.prompts`);
  const effects = `${context.transcript}.effects`;
  return {
    main:
      context.env.CRASH_PROGRAM === 'loop'
        ? {
            description: 'Sends reports',
            model,
            system: 'You send reports.',
            tools: { send: sendTool(effects, phase) },
          }
        : aiSdkAgentDefinition(
            context.env.CRASH_PROGRAM === 'stream-text'
              ? programStream(model, effects, phase)
              : programAgent(model, effects, phase),
            { description: 'Sends reports', model },
          ),
  };
};
