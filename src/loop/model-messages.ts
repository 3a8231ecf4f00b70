/**
 * The one place where our on-disk {@link Message} meets the AI SDK's `ModelMessage`. Everything
 * the transcript stores is ours and versioned; this module is what a dependency upgrade may
 * have to change, and nothing else.
 *
 * Provider data (reasoning signatures, cache hints, item ids) travels in a part's `provider`
 * member on disk and in `providerOptions` / `providerMetadata` in the SDK, unchanged both ways,
 * so that a provider which insists on its reasoning being replayed verbatim gets it back.
 *
 * @module
 */
import type { AssistantModelMessage, JSONValue, ModelMessage, ToolModelMessage } from 'ai';
import type {
  ContentPart,
  JsonObject,
  JsonValue,
  Message,
  ToolCallPart,
  ToolResultPart,
} from '../transcript/records.ts';

type ProviderOptions = NonNullable<AssistantModelMessage['providerOptions']>;
type SdkToolResultOutput = Extract<
  Extract<ToolModelMessage['content'][number], { type: 'tool-result' }>['output'],
  object
>;

/**
 * One part of a model's answer, as the AI SDK reports it in `content`. Typed loosely on
 * purpose (any other `type` is allowed), so that the SDK's `content` passes as it is, whatever
 * kinds of part it holds or a later version adds; the converter drops those it does not store.
 *
 * @example
 * const parts: ModelOutputPart[] = [
 *   { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: { path: 'a.md' } },
 * ];
 * const message = assistantMessageFromOutput(parts);
 */
export type ModelOutputPart =
  | { type: 'text'; text: string; providerMetadata?: unknown }
  | { type: 'reasoning'; text: string; providerMetadata?: unknown }
  | {
      type: 'tool-call';
      toolCallId: string;
      toolName: string;
      input: unknown;
      providerMetadata?: unknown;
      providerExecuted?: boolean;
    }
  | { type: string; [key: string]: unknown };

/**
 * Convert a conversation to the AI SDK's messages. Consecutive tool messages become one tool
 * message whose results stand in the call order of the assistant turn before them (we write
 * each result as its own message as it completes, so that a finished sibling survives a
 * crash; providers want one turn of results). System turns become system messages.
 *
 * Tool-call input that is not a JSON object (a model's malformed call, kept verbatim on disk)
 * is sent as `{}`, as the AI SDK itself does: providers refuse anything else, and the error
 * result that answers such a call quotes what the model sent.
 *
 * @example
 * const modelMessages = toModelMessages([
 *   { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
 * ]);
 * // [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]
 */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  const result: ModelMessage[] = [];
  let callOrder: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        result.push({ role: 'system', content: textOf(message.content) });
        break;
      case 'user':
        result.push({
          role: 'user',
          content: message.content.flatMap((part) =>
            part.type === 'text'
              ? [withOptions({ type: 'text' as const, text: part.text }, part)]
              : [],
          ),
        });
        break;
      case 'assistant': {
        const content = message.content.flatMap(toAssistantPart);
        callOrder = message.content.flatMap((part) =>
          part.type === 'tool-call' ? [part.callId] : [],
        );
        result.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const parts = message.content.flatMap((part) =>
          part.type === 'tool-result' ? [toToolResultPart(part)] : [],
        );
        const previous = result.at(-1);
        if (previous?.role === 'tool') {
          previous.content.push(...parts);
          sortByCallOrder(previous, callOrder);
        } else {
          const tool: ToolModelMessage = { role: 'tool', content: parts };
          sortByCallOrder(tool, callOrder);
          result.push(tool);
        }
        break;
      }
    }
  }
  return result;
}

/**
 * The request a model is sent: system turns at the head of the conversation join the loop's
 * system prompt as `instructions` (AI SDK 7 refuses system messages in `messages`, and not
 * every provider takes them anywhere but first); a system turn further down becomes a user
 * turn opening with `[system]`, so that its words still reach the model in their place.
 *
 * @example
 * import { streamText } from 'ai';
 * import { conversationView } from 'llm-agent-revival/transcript';
 * import { toModelPrompt } from 'llm-agent-revival/loop';
 * const prompt = toModelPrompt(conversationView(records), 'Be brief.');
 * const result = streamText({ model, ...prompt });
 */
export function toModelPrompt(
  messages: readonly Message[],
  system?: string,
): { instructions?: string; messages: ModelMessage[] } {
  const head: string[] = system === undefined || system === '' ? [] : [system];
  let start = 0;
  while (messages[start]?.role === 'system') {
    head.push(textOf((messages[start] as Message).content));
    start += 1;
  }
  const converted = toModelPromptBody(messages.slice(start));
  return head.length === 0
    ? { messages: converted }
    : { instructions: head.join('\n\n'), messages: converted };
}

/**
 * The messages of a prompt after its leading system turns: {@link toModelMessages}, with
 * each system turn as a user turn opening with `[system]`. For a normalized view whose first
 * message is not a tool message, the body of a concatenation is the concatenation of the
 * bodies: what lets a run convert only the turns it added (see `RunConversation`).
 *
 * @example
 * toModelPromptBody([{ role: 'system', content: [{ type: 'text', text: 'Budget is low.' }] }]);
 * // [{ role: 'user', content: [{ type: 'text', text: '[system] Budget is low.' }] }]
 */
export function toModelPromptBody(messages: readonly Message[]): ModelMessage[] {
  return toModelMessages(
    messages.map(
      (message): Message =>
        message.role === 'system'
          ? {
              role: 'user',
              content: [{ type: 'text', text: `[system] ${textOf(message.content)}` }],
            }
          : message,
    ),
  );
}

/**
 * Convert the AI SDK's messages back to ours (for importing a conversation, and for tests that
 * prove the round trip). Parts we do not store (files, images, approvals) are dropped.
 *
 * @example
 * fromModelMessages([{ role: 'user', content: 'Hi' }]);
 * // [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]
 */
export function fromModelMessages(messages: readonly ModelMessage[]): Message[] {
  return messages.map((message): Message => {
    if (typeof message.content === 'string') {
      return { role: message.role, content: [{ type: 'text', text: message.content }] };
    }
    const content: ContentPart[] = [];
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
        case 'reasoning':
          content.push(withProvider({ type: part.type, text: part.text }, part.providerOptions));
          break;
        case 'tool-call':
          content.push(
            withProvider(
              {
                type: 'tool-call',
                callId: part.toolCallId,
                toolName: part.toolName,
                input: toJson(part.input),
              },
              part.providerOptions,
            ),
          );
          break;
        case 'tool-result':
          content.push(
            withProvider(
              {
                type: 'tool-result',
                callId: part.toolCallId,
                toolName: part.toolName,
                ...fromToolResultOutput(part.output),
              },
              part.providerOptions,
            ),
          );
          break;
        default:
          break;
      }
    }
    return { role: message.role, content };
  });
}

/**
 * Build the assistant turn we store from the parts a model answered with (`content` of an AI
 * SDK step). Text and reasoning keep their provider metadata; provider-executed calls and
 * parts we do not store are dropped. Adjacent text parts are kept apart, as the provider sent
 * them, because a signature may belong to one of them.
 *
 * @example
 * assistantMessageFromOutput([{ type: 'text', text: 'Done.' }]);
 * // { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }
 */
export function assistantMessageFromOutput(parts: readonly ModelOutputPart[]): Message {
  const content: ContentPart[] = [];
  for (const part of parts) {
    const provider = providerJson(part.providerMetadata);
    if (part.type === 'text' || part.type === 'reasoning') {
      const text = (part as { text: string }).text;
      if (part.type === 'text' && text === '' && provider === undefined) continue;
      content.push(withJsonProvider({ type: part.type, text }, provider));
    } else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      const call = part as Extract<ModelOutputPart, { type: 'tool-call' }>;
      content.push(
        withJsonProvider(
          {
            type: 'tool-call',
            callId: call.toolCallId,
            toolName: call.toolName,
            input: toJson(call.input),
          },
          provider,
        ),
      );
    }
  }
  return { role: 'assistant', content };
}

type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

function toAssistantPart(part: ContentPart): AssistantPart[] {
  switch (part.type) {
    case 'text':
      return [withOptions({ type: 'text' as const, text: part.text }, part)];
    case 'reasoning':
      return [withOptions({ type: 'reasoning' as const, text: part.text }, part)];
    case 'tool-call':
      return [
        withOptions(
          {
            type: 'tool-call' as const,
            toolCallId: part.callId,
            toolName: part.toolName,
            input: isJsonObject(part.input) ? part.input : {},
          },
          part,
        ),
      ];
    default:
      return [];
  }
}

function toToolResultPart(part: ToolResultPart) {
  return withOptions(
    {
      type: 'tool-result' as const,
      toolCallId: part.callId,
      toolName: part.toolName,
      output: toToolResultOutput(part.output, part.isError),
    },
    part,
  );
}

/**
 * Our `{ output, isError }` as the SDK's tagged output: strings as text, anything else as JSON.
 *
 * @example
 * toToolResultOutput('ENOENT', true); // { type: 'error-text', value: 'ENOENT' }
 */
export function toToolResultOutput(output: JsonValue, isError: boolean): SdkToolResultOutput {
  if (typeof output === 'string') {
    return isError ? { type: 'error-text', value: output } : { type: 'text', value: output };
  }
  const value = output as JSONValue;
  return isError ? { type: 'error-json', value } : { type: 'json', value };
}

function fromToolResultOutput(output: SdkToolResultOutput): {
  output: JsonValue;
  isError: boolean;
} {
  switch (output.type) {
    case 'text':
    case 'json':
      return { output: toJson(output.value), isError: false };
    case 'error-text':
    case 'error-json':
      return { output: toJson(output.value), isError: true };
    case 'execution-denied':
      return { output: output.reason ?? 'The tool call was denied.', isError: true };
    default:
      return { output: toJson(output.value), isError: false };
  }
}

function sortByCallOrder(message: ToolModelMessage, callOrder: readonly string[]): void {
  const rank = (part: ToolModelMessage['content'][number]) => {
    const index = part.type === 'tool-result' ? callOrder.indexOf(part.toolCallId) : -1;
    return index === -1 ? Number.MAX_SAFE_INTEGER : index;
  };
  message.content.sort((left, right) => rank(left) - rank(right));
}

function textOf(parts: readonly ContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

function withOptions<T extends object>(target: T, part: { provider?: JsonObject }): T {
  if (part.provider === undefined) return target;
  return { ...target, providerOptions: part.provider as ProviderOptions };
}

function withProvider<T extends ContentPart>(part: T, options: ProviderOptions | undefined): T {
  return withJsonProvider(part, providerJson(options));
}

function withJsonProvider<T extends ContentPart>(part: T, provider: JsonObject | undefined): T {
  return provider === undefined ? part : { ...part, provider };
}

function providerJson(metadata: unknown): JsonObject | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  const json = toJson(metadata);
  return isJsonObject(json) && Object.keys(json).length > 0 ? json : undefined;
}

/** A value as JSON would store it (undefined members dropped, non-JSON values stringified). */
function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch {
    return String(value);
  }
}

function isJsonObject(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The calls of an assistant turn, in order (none for any other role).
 *
 * @example
 * callsOf(turn).map((call) => call.callId); // ['call_1', 'call_2']
 */
export function callsOf(message: Message): ToolCallPart[] {
  return message.role === 'assistant'
    ? message.content.filter((part): part is ToolCallPart => part.type === 'tool-call')
    : [];
}
