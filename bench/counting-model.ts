import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';

/** The tool every scripted step calls. */
export const STEP_TOOL_NAME = 'increment';

/** The user turn that opens every scripted run, ours and LangGraph's alike. */
export const OPENING_TEXT = 'Count up with the increment tool, one call per turn, then say done.';

/** The text of the final turn. */
export const FINAL_TEXT = 'Done counting.';

/** The call id of step `step` (1-based): the same in both systems. */
export function stepCallId(step: number): string {
  return `call-${step}`;
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/**
 * A model with no latency that asks for one `increment` call per turn until `steps` calls
 * have been answered, then finishes with {@link FINAL_TEXT}. It reads its position from the
 * prompt (the number of tool results in it), so a run that was restarted carries on where its
 * transcript says it was. `onCall` is told the step each call starts: the bench's clock.
 *
 * @example
 * const model = countingModel(1000, (step) => marks.push(performance.now()));
 */
export function countingModel(
  steps: number,
  onCall: (step: number) => void = () => undefined,
): MockLanguageModelV4 {
  const next = (options: LanguageModelV4CallOptions) => {
    let answered = 0;
    for (const message of options.prompt) if (message.role === 'tool') answered += 1;
    const step = answered + 1;
    onCall(step);
    return step <= steps ? { step, call: true } : { step, call: false };
  };
  return new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      const { step, call } = next(options);
      return {
        content: call
          ? [
              {
                type: 'tool-call',
                toolCallId: stepCallId(step),
                toolName: STEP_TOOL_NAME,
                input: JSON.stringify({ value: step }),
              },
            ]
          : [{ type: 'text', text: FINAL_TEXT }],
        finishReason: { unified: call ? 'tool-calls' : 'stop', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
    doStream: async (options) => {
      const { step, call } = next(options);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (call) {
        parts.push({
          type: 'tool-call',
          toolCallId: stepCallId(step),
          toolName: STEP_TOOL_NAME,
          input: JSON.stringify({ value: step }),
        });
      } else {
        parts.push(
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: FINAL_TEXT },
          { type: 'text-end', id: 't' },
        );
      }
      parts.push({
        type: 'finish',
        usage: USAGE,
        finishReason: { unified: call ? 'tool-calls' : 'stop', raw: undefined },
      });
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

/** What the increment tool answers for step `step`: the same text in both systems. */
export function stepToolOutput(step: number): string {
  return `counted to ${step}`;
}
