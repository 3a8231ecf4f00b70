import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { jsonSchema, streamText, type Tool, type ToolSet } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import {
  assistantMessageFromOutput,
  type ModelOutputPart,
} from '../../../src/loop/model-messages.ts';
import type { Message } from '../../../src/transcript/records.ts';

/*
 * The reference the TurnCollector tests compare with: the AI SDK's streamText, set up as the loop
 * used it before ff2605f (maxRetries 0, tools declared without `execute`), run on the parts a
 * provider sent.
 */

export const KNOWN_TOOLS = ['read_file', 'write_file'];
export const UNKNOWN_TOOLS = ['nope', 'toString', 'constructor', '__proto__'];

/** The tools as the loop declared them to streamText (src/loop/loop.ts `#sdkTools` at 52a2ff9). */
export function declaredTools(): ToolSet {
  const tools: ToolSet = {};
  for (const name of KNOWN_TOOLS) {
    tools[name] = {
      description: `the ${name} tool`,
      inputSchema: jsonSchema({ type: 'object' }),
    } as Tool;
  }
  return tools;
}

export function mockModel(parts: readonly LanguageModelV4StreamPart[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({ stream: convertArrayToReadableStream([...parts]) }),
  });
}

export interface Collected {
  message: Message;
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number };
  errors: unknown[];
}

/** What the loop stored before ff2605f: streamText's content, finish reason and usage. */
export async function viaStreamText(
  parts: readonly LanguageModelV4StreamPart[],
): Promise<Collected> {
  const result = streamText({
    model: mockModel(parts),
    prompt: 'hi',
    tools: declaredTools(),
    maxRetries: 0,
    onError: () => undefined,
  });
  const errors: unknown[] = [];
  for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
  const [content, reason, total] = await Promise.all([
    result.content,
    result.finishReason,
    result.totalUsage,
  ]);
  return {
    message: assistantMessageFromOutput(content as unknown as ModelOutputPart[]),
    finishReason: reason,
    usage: { inputTokens: total.inputTokens ?? 0, outputTokens: total.outputTokens ?? 0 },
    errors,
  };
}
