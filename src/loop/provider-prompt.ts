/**
 * The last step before the wire: the AI SDK's `ModelMessage`s, as {@link toModelMessages} makes
 * them, into the prompt a provider's `LanguageModelV4.doStream` takes.
 *
 * `streamText` does this conversion itself, for the whole conversation on every call, together
 * with a scan for downloadable files and tool approvals; on a long run that was most of the
 * loop's own time (docs/performance.md). The loop calls the provider's `doStream` directly, so it
 * converts each message once, here, and keeps the result. The mapping is the SDK's own
 * (`convertToLanguageModelPrompt`, ai 7) restricted to the parts our transcript stores: text,
 * reasoning, tool calls and tool results. test/loop/provider-prompt.property.test.ts proves it
 * equal to the SDK's on random conversations.
 *
 * @module
 */
import type {
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { AssistantModelMessage, ModelMessage } from 'ai';

type AssistantPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type ToolPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];
type UserPart = Extract<LanguageModelV4Message, { role: 'user' }>['content'][number];

/**
 * Convert messages to a provider's prompt messages, one for one, except that a tool message
 * left with no results is dropped (as the AI SDK drops it). Consecutive tool messages are
 * expected merged already ({@link toModelMessages} does it), so the result for `a ++ b` is the
 * result for `a` followed by the result for `b`: what lets a run convert only what it added.
 *
 * Throws a `TypeError` on a part the transcript never stores (an image, a file, an approval):
 * a programmer error, since every message here comes from {@link toModelMessages}.
 *
 * @example
 * toProviderMessages([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
 * // [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]
 */
export function toProviderMessages(messages: readonly ModelMessage[]): LanguageModelV4Message[] {
  const result: LanguageModelV4Message[] = [];
  for (const message of messages) {
    const converted = toProviderMessage(message);
    if (converted.role === 'tool' && converted.content.length === 0) continue;
    result.push(converted);
  }
  return result;
}

/**
 * The whole prompt of one call: the instructions as its one system message, then the messages.
 *
 * @example
 * const prompt = toProviderPrompt(toModelPrompt(view, 'Be brief.'));
 * await model.doStream({ prompt, abortSignal });
 */
export function toProviderPrompt(prompt: {
  instructions?: string;
  messages: readonly ModelMessage[];
}): LanguageModelV4Prompt {
  const body = toProviderMessages(prompt.messages);
  return prompt.instructions === undefined
    ? body
    : [{ role: 'system', content: prompt.instructions }, ...body];
}

function toProviderMessage(message: ModelMessage): LanguageModelV4Message {
  switch (message.role) {
    case 'system':
      return withOptions({ role: 'system', content: message.content }, message.providerOptions);
    case 'user': {
      const content: UserPart[] =
        typeof message.content === 'string'
          ? [{ type: 'text', text: message.content }]
          : message.content.flatMap((part): UserPart[] => {
              if (part.type !== 'text') throw unstored('user', part.type);
              return part.text === ''
                ? []
                : [withOptions({ type: 'text', text: part.text }, part.providerOptions)];
            });
      return withOptions({ role: 'user', content }, message.providerOptions);
    }
    case 'assistant': {
      const content: AssistantPart[] =
        typeof message.content === 'string'
          ? [{ type: 'text', text: message.content }]
          : message.content.flatMap(toAssistantPart);
      return withOptions({ role: 'assistant', content }, message.providerOptions);
    }
    case 'tool': {
      const content = message.content.map((part): ToolPart => {
        if (part.type !== 'tool-result') throw unstored('tool', part.type);
        if (part.output.type === 'content') throw unstored('tool', 'content output');
        return withOptions(
          {
            type: 'tool-result',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            output: part.output as LanguageModelV4ToolResultOutput,
          },
          part.providerOptions,
        );
      });
      return withOptions({ role: 'tool', content }, message.providerOptions);
    }
  }
}

type SdkAssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

function toAssistantPart(part: SdkAssistantPart): AssistantPart[] {
  switch (part.type) {
    case 'text':
      // An empty text carries nothing, unless it carries provider data.
      return part.text === '' && part.providerOptions == null
        ? []
        : [withOptions({ type: 'text', text: part.text }, part.providerOptions)];
    case 'reasoning':
      return [withOptions({ type: 'reasoning', text: part.text }, part.providerOptions)];
    case 'tool-call':
      return [
        withOptions(
          {
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            ...(part.providerExecuted === undefined
              ? {}
              : { providerExecuted: part.providerExecuted }),
          },
          part.providerOptions,
        ),
      ];
    default:
      throw unstored('assistant', part.type);
  }
}

/**
 * `providerOptions` only when there are some. The AI SDK writes `providerOptions: undefined`
 * where there are none; no provider sends an undefined member, so the two are the same request.
 */
function withOptions<T extends object>(
  target: T,
  providerOptions: SharedV4ProviderOptions | undefined,
): T {
  return providerOptions == null ? target : { ...target, providerOptions };
}

function unstored(role: string, kind: string): TypeError {
  return new TypeError(
    `toProviderMessages: a ${role} message holds a "${kind}" part, which no transcript stores`,
  );
}
