/**
 * The AI SDK programs the crash tests kill and revive: a scripted model (its prompts logged to
 * a file, for the test to read what the model was sent), a side-effect tool that logs its start
 * and, in the first phase, SIGKILLs its own process while it runs.
 */
import { appendFileSync } from 'node:fs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import {
  type ModelMessage,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  tool,
  wrapLanguageModel,
} from 'ai';
import { z } from 'zod';
import { revivableModel, revivableTools } from '../../../src/integrations/ai-sdk/index.ts';
import { ScriptedModel } from '../../../src/testing/index.ts';

export const PROMPT = 'Send ann the report.';
export const FINAL = 'It may have gone out already, so I did not send it again.';
/** The child's and the parent's last words in child-crash-worker.ts. */
export const CHILD_FINAL = 'The report may have gone out; I did not send it again.';
export const PARENT_FINAL = 'My mailer says it may have gone out already.';

/** `first`: the model calls `send`, which kills the process; `revived`: the model answers. */
export type Phase = 'first' | 'revived';

export function phaseOf(env: NodeJS.ProcessEnv): Phase {
  return env.CRASH_PHASE === 'revived' ? 'revived' : 'first';
}

/** The scripted model of a phase; every prompt it is sent is appended to `promptsFile`. */
export function scriptedModel(phase: Phase, promptsFile: string): LanguageModelV4 {
  const scripted = new ScriptedModel(
    phase === 'first'
      ? [{ text: 'Sending.', calls: [{ id: 'call_send_1', name: 'send', input: { to: 'ann' } }] }]
      : [{ text: FINAL }],
  );
  return wrapLanguageModel({
    model: scripted.model,
    middleware: {
      specificationVersion: 'v4',
      transformParams: async ({ params }) => {
        appendFileSync(promptsFile, `${JSON.stringify(params.prompt)}\n`);
        return params;
      },
    },
  });
}

/** The side-effect tool: logs `start <id>` to `effectsFile`, then dies in the first phase. */
export function sendTool(effectsFile: string, phase: Phase) {
  return tool({
    description: 'Send a report by email',
    inputSchema: z.object({ to: z.string() }),
    execute: async ({ to }, { toolCallId }) => {
      appendFileSync(effectsFile, `start ${toolCallId}\n`);
      if (phase === 'first') {
        process.kill(process.pid, 'SIGKILL');
        await new Promise(() => undefined);
      }
      return `sent to ${to}`;
    },
  });
}

/** The program's agent, built once as a program builds it: wrapped model, wrapped tools. */
export function programAgent(model: LanguageModelV4, effectsFile: string, phase: Phase) {
  return new ToolLoopAgent({
    model: revivableModel(model),
    tools: revivableTools({ send: sendTool(effectsFile, phase) }),
    instructions: 'You send reports.',
  });
}

/** The program's streamText call, as a function of what it starts or continues from. */
export function programStream(model: LanguageModelV4, effectsFile: string, phase: Phase) {
  const wrapped = revivableModel(model);
  const tools = revivableTools({ send: sendTool(effectsFile, phase) });
  return (
    input: ({ messages: ModelMessage[] } | { prompt: string }) & { abortSignal?: AbortSignal },
  ) =>
    streamText({
      model: wrapped,
      tools,
      stopWhen: stepCountIs(5),
      system: 'You send reports.',
      ...input,
    });
}
