import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import {
  revivableAgentsModel,
  revivableFunctionTools,
  TranscriptSession,
} from '../src/integrations/openai-agents/index.ts';
import { FINAL, STEPS, TASK } from './ai-sdk-program.ts';

/*
 * The OpenAI Agents JS program the openai-agents part kills: a real Agent run by `run()` over a
 * TranscriptSession, its model and function tools wrapped (revivableAgentsModel,
 * revivableFunctionTools), whose model asks for a side-effect `send` (idempotency undeclared)
 * and a read-only `lookup` at each of STEPS steps, then answers — the ai-sdk part's program,
 * in the other SDK. The model decides from the input it is sent (the function calls in it), so
 * a revived run is answered where it stands. Each tool logs its start to a side file, synced
 * before it does anything.
 */

// A scripted model's runs have no one to export traces to (the SDK would warn of no key in every process).
setTracingDisabled(true);

function answer(input: string | AgentInputItem[]): ModelResponse['output'] {
  const items = typeof input === 'string' ? [] : input;
  const step = Math.floor(
    items.filter((item) => (item as { type?: string }).type === 'function_call').length / 2,
  );
  const text = (value: string) => ({
    type: 'message' as const,
    role: 'assistant' as const,
    status: 'completed' as const,
    content: [{ type: 'output_text' as const, text: value }],
  });
  if (step >= STEPS) return [text(FINAL)];
  const call = (name: string, args: string) => ({
    type: 'function_call' as const,
    callId: `s${step}-${name}`,
    name,
    arguments: args,
    status: 'completed' as const,
  });
  return [text(`Step ${step}.`), call('send', '{"to":"ann"}'), call('lookup', '{"name":"ann"}')];
}

/**
 * The Responses API's rule on an input: each function call answered exactly once, no result
 * without its call.
 *
 * @example
 * responsesPairingProblems([{ type: 'function_call', callId: 'c1', name: 'send', arguments: '{}' }]);
 * // ['c1 answered 0 times']
 */
export function responsesPairingProblems(input: string | AgentInputItem[]): string[] {
  if (typeof input === 'string') return [];
  const idsOf = (type: string) =>
    input.flatMap((item) => {
      const entry = item as { type?: string; callId?: string };
      return entry.type === type ? [entry.callId ?? ''] : [];
    });
  const calls = idsOf('function_call');
  const results = idsOf('function_call_result');
  const problems: string[] = [];
  for (const call of calls) {
    const count = results.filter((id) => id === call).length;
    if (count !== 1) problems.push(`${call} answered ${count} times`);
  }
  for (const result of results) if (!calls.includes(result)) problems.push(`${result} has no call`);
  return problems;
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
 * The program's Agent: tool starts go to `executions`, pairing problems of any input the
 * model is sent to `problems`.
 *
 * @example
 * const agent = mailerAgent('runs/executions.log', []);
 */
export function mailerAgent(executions: string, problems: string[]): Agent {
  const model: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      problems.push(...responsesPairingProblems(request.input));
      return {
        usage: new Usage({ inputTokens: 10, outputTokens: 5 }),
        output: answer(request.input),
      };
    },
    getStreamedResponse(): AsyncIterable<never> {
      throw new Error('the program does not stream');
    },
  };
  const send = tool({
    name: 'send',
    description: 'Send a report',
    parameters: z.object({ to: z.string() }),
    execute: async ({ to }, _context, details) => {
      logSynced(executions, details?.toolCall?.callId ?? 'no call id');
      await new Promise((resolve) => setTimeout(resolve, 10));
      return `sent to ${to}`;
    },
  });
  const lookup = tool({
    name: 'lookup',
    description: 'Look a person up',
    parameters: z.object({ name: z.string() }),
    execute: async ({ name }, _context, details) => {
      logSynced(executions, details?.toolCall?.callId ?? 'no call id');
      return JSON.stringify({ name, email: `${name}@example.com` });
    },
  });
  return new Agent({
    name: 'mailer',
    instructions: 'You send reports.',
    model: revivableAgentsModel(model),
    tools: revivableFunctionTools([send, lookup], { idempotency: { lookup: 'read-only' } }),
  });
}

/**
 * Run (or, when its process died, revive and carry on) the program on the transcript at
 * `path`; tool starts go to `executions`, pairing problems of any input to `problems`.
 *
 * @example
 * const text = await runOpenAiAgentsProgram('runs/main.jsonl', 'runs/executions.log', []);
 */
export async function runOpenAiAgentsProgram(
  path: string,
  executions: string,
  problems: string[],
  onOpened?: () => void,
): Promise<string> {
  const agent = mailerAgent(executions, problems);
  const opened = await TranscriptSession.open({ path, sessionOptions: { durability: 'fsync' } });
  if (!opened.ok) throw new Error(`${opened.reason}: ${opened.detail}`);
  const { session } = opened;
  onOpened?.();
  try {
    const fresh = (await session.getItems()).length === 0;
    const result = await session.within(() =>
      run(agent, fresh ? TASK : [], { session, maxTurns: STEPS + 2 }),
    );
    return String(result.finalOutput ?? '');
  } finally {
    await session.close();
  }
}
