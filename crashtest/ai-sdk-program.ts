import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { LanguageModelV4GenerateResult, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { RevivableRun, revivableModel, revivableTools } from '../src/integrations/ai-sdk/index.ts';
import { pairingProblems } from '../src/testing/index.ts';

/*
 * The AI SDK program the ai-sdk part kills: a real ToolLoopAgent, wrapped (revivableModel,
 * revivableTools), whose model asks for a side-effect `send` (idempotency undeclared) and a
 * read-only `lookup` in parallel at each of STEPS steps, then answers. The model decides from
 * the prompt it is sent (the number of assistant turns in it), so a revived run is answered
 * where it stands. Each tool logs its start to a side file, synced before it does anything.
 */

/** Tool steps before the final answer. */
export const STEPS = 4;
export const FINAL = 'All sent.';
/** The task the run is given, recorded once in its transcript. */
export const TASK = 'Send ann everything.';

function answer(prompt: LanguageModelV4Prompt): LanguageModelV4GenerateResult {
  const step = prompt.filter((message) => message.role === 'assistant').length;
  const usage = {
    inputTokens: { total: 10, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: undefined, reasoning: undefined },
  };
  if (step >= STEPS) {
    return {
      content: [{ type: 'text', text: FINAL }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  }
  return {
    content: [
      { type: 'text', text: `Step ${step}.` },
      { type: 'tool-call', toolCallId: `s${step}-send`, toolName: 'send', input: '{"to":"ann"}' },
      {
        type: 'tool-call',
        toolCallId: `s${step}-lookup`,
        toolName: 'lookup',
        input: '{"name":"ann"}',
      },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** Append one line to `file` and sync it before returning. */
function logSynced(file: string, line: string): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The program's ToolLoopAgent: tool starts go to `executions`, pairing problems of any prompt
 * the model is sent to `problems`.
 *
 * @example
 * const agent = reportAgent('runs/executions.log', []);
 */
export function reportAgent(executions: string, problems: string[]) {
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      for (const problem of pairingProblems(options.prompt)) problems.push(problem);
      return answer(options.prompt);
    },
  });
  const started = (callId: string) => logSynced(executions, callId);
  return new ToolLoopAgent({
    model: revivableModel(model),
    stopWhen: stepCountIs(STEPS + 2),
    tools: revivableTools(
      {
        send: tool({
          inputSchema: z.object({ to: z.string() }),
          execute: async ({ to }, { toolCallId }) => {
            started(toolCallId);
            await new Promise((resolve) => setTimeout(resolve, 10));
            return `sent to ${to}`;
          },
        }),
        lookup: tool({
          inputSchema: z.object({ name: z.string() }),
          execute: async ({ name }, { toolCallId }) => {
            started(toolCallId);
            return { name, email: `${name}@example.com` };
          },
        }),
      },
      { idempotency: { lookup: 'read-only' } },
    ),
  });
}

/**
 * Run (or, when its process died, revive and carry on) the program on the transcript at
 * `path`; tool starts go to `executions`, pairing problems of any prompt to `problems`.
 *
 * @example
 * const text = await runAiSdkProgram('runs/main.jsonl', 'runs/executions.log', []);
 */
export async function runAiSdkProgram(
  path: string,
  executions: string,
  problems: string[],
  onOpened?: () => void,
): Promise<string> {
  const agent = reportAgent(executions, problems);
  const opened = await RevivableRun.open({ path, sessionOptions: { durability: 'fsync' } });
  if (!opened.ok) throw new Error(`${opened.reason}: ${opened.detail}`);
  const { run } = opened;
  onOpened?.();
  try {
    const input = run.messages.length === 0 ? { prompt: TASK } : { messages: run.messages };
    return (await run.within(() => agent.generate(input))).text;
  } finally {
    await run.close();
  }
}
