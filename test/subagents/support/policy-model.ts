import { createHash } from 'node:crypto';
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

/** One turn of a prompt, flattened to what a policy decides on. */
export interface PolicyTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
  calls: { id: string; name: string; input: unknown }[];
  results: { id: string; name: string; output: unknown; isError: boolean }[];
}

/** What a policy answers: text, calls (ids are made from the prompt), or both. */
export interface PolicyStep {
  text?: string;
  calls?: { name: string; input: unknown }[];
}

/**
 * A MockLanguageModelV4 whose every answer is a pure function of its prompt. Call ids are a
 * digest of the prompt and the call's position: a process that revives a run and asks again
 * gets the same ids for the same prompt, and never an id already used in a different prompt.
 * `gate`, when given, is awaited before answering (tests hold a run mid-way with it).
 */
export function policyModel(
  name: string,
  policy: (turns: PolicyTurn[]) => PolicyStep,
  gate?: (turns: PolicyTurn[]) => Promise<void>,
): MockLanguageModelV4 {
  const answer = async (options: LanguageModelV4CallOptions) => {
    const turns = flattenPrompt(options.prompt);
    if (gate !== undefined) await gate(turns);
    const step = policy(turns);
    const digest = createHash('sha256').update(JSON.stringify(turns)).digest('hex').slice(0, 10);
    return {
      stream: convertArrayToReadableStream(
        streamParts(step, (index) => `${name}-${digest}-${index}`),
      ),
    };
  };
  return new MockLanguageModelV4({ provider: 'policy', modelId: name, doStream: answer });
}

/** The prompt as turns. */
export function flattenPrompt(prompt: LanguageModelV4Prompt): PolicyTurn[] {
  return prompt.map((message): PolicyTurn => {
    const turn: PolicyTurn = { role: message.role, text: '', calls: [], results: [] };
    if (typeof message.content === 'string') {
      turn.text = message.content;
      return turn;
    }
    for (const part of message.content) {
      if (part.type === 'text') turn.text += part.text;
      else if (part.type === 'tool-call') {
        turn.calls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
      } else if (part.type === 'tool-result') {
        const output = part.output;
        const value = 'value' in output ? output.value : output.type;
        turn.results.push({
          id: part.toolCallId,
          name: part.toolName,
          output: typeof value === 'string' ? tryJson(value) : value,
          isError: output.type === 'error-text' || output.type === 'error-json',
        });
      }
    }
    return turn;
  });
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function streamParts(
  step: PolicyStep,
  idOf: (index: number) => string,
): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (step.text !== undefined) {
    parts.push({ type: 'text-start', id: 't' });
    parts.push({ type: 'text-delta', id: 't', delta: step.text });
    parts.push({ type: 'text-end', id: 't' });
  }
  (step.calls ?? []).forEach((call, index) => {
    parts.push({
      type: 'tool-call',
      toolCallId: idOf(index),
      toolName: call.name,
      input: JSON.stringify(call.input),
    });
  });
  const calls = (step.calls ?? []).length > 0;
  parts.push({
    type: 'finish',
    finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' },
    usage: {
      inputTokens: { total: 10, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: undefined, reasoning: undefined },
    },
  });
  return parts;
}

/** Every result of a tool in the conversation so far. */
export function resultsOf(turns: PolicyTurn[], toolName: string): PolicyTurn['results'] {
  return turns.flatMap((turn) => turn.results.filter((result) => result.name === toolName));
}

/** The text of the first user turn: the task. */
export function taskOf(turns: PolicyTurn[]): string {
  return turns.find((turn) => turn.role === 'user')?.text ?? '';
}
