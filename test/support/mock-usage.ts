import type { LanguageModelV4Usage } from '@ai-sdk/provider';

/**
 * A provider's token usage with only the totals given, as a mock model reports it.
 *
 * @example
 * const finish = { type: 'finish', usage: mockUsage(7, 3), finishReason };
 */
export function mockUsage(input: number, output: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: undefined, reasoning: undefined },
  };
}
