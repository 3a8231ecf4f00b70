import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import type { ToolDefinition } from '../../../src/loop/types.ts';

/*
 * The conversation the crash tests kill at every point: a parallel pair of calls, then one
 * more, then an answer. The model is a pure function of its prompt (the step is the number of
 * assistant turns already in it), so a revived run picks the script up where the dead one left.
 */

const STEPS: { calls: { id: string; input: { text: string } }[] }[] = [
  {
    calls: [
      { id: 'call_a', input: { text: 'a' } },
      { id: 'call_b', input: { text: 'b' } },
    ],
  },
  { calls: [{ id: 'call_c', input: { text: 'c' } }] },
];

/** The scripted model of the crash tests. */
export function crashScriptModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const step = STEPS[prompt.filter((message) => message.role === 'assistant').length];
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (step === undefined) {
        parts.push({ type: 'text-start', id: 't' });
        parts.push({ type: 'text-delta', id: 't', delta: 'All steps done.' });
        parts.push({ type: 'text-end', id: 't' });
      } else {
        for (const call of step.calls) {
          parts.push({
            type: 'tool-call',
            toolCallId: call.id,
            toolName: 'step',
            input: JSON.stringify(call.input),
          });
        }
      }
      parts.push({
        type: 'finish',
        finishReason: { unified: step === undefined ? 'stop' : 'tool-calls', raw: undefined },
        usage: {
          inputTokens: {
            total: 1,
            noCache: undefined,
            cacheRead: undefined,
            cacheWrite: undefined,
          },
          outputTokens: { total: 1, text: undefined, reasoning: undefined },
        },
      });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

/** The one tool: records `start <callId>` as its side effect (durably, through `record`). */
export function crashScriptTools(
  record: (line: string) => void,
): ToolDefinition<{ text: string }>[] {
  return [
    {
      name: 'step',
      description: 'Do one step',
      inputSchema: z.object({ text: z.string() }),
      idempotency: 'side-effect',
      async execute({ text }, { callId }) {
        record(`start ${callId}`);
        return `did ${text}`;
      },
    },
  ];
}
