import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { generateText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { toModelPrompt, toModelPromptBody } from '../../src/loop/model-messages.ts';
import { toProviderMessages, toProviderPrompt } from '../../src/loop/provider-prompt.ts';
import type {
  ContentPart,
  JsonObject,
  JsonValue,
  Message,
  ToolCallPart,
  ToolResultPart,
} from '../../src/transcript/records.ts';
import { mockUsage } from '../support/mock-usage.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { system, user } from '../transcript/conversation-builders.ts';

/*
 * toProviderPrompt is the AI SDK's own prompt conversion (convertToLanguageModelPrompt, which
 * generateText and streamText run before calling the provider) restricted to what a transcript
 * stores. The reference is the prompt a mock provider actually receives from generateText for
 * the same messages: any difference (an empty text kept or dropped, an empty tool message
 * kept, provider data lost or moved, a member left undefined, the instructions misplaced)
 * fails here. The second half is the property RunConversation relies on to convert only what a
 * run appended: the conversion of `a ++ b`, where `b` opens with an assistant turn, is the
 * conversion of `a` followed by that of `b`.
 */

const provider: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.constant({ anthropic: { signature: 's' } }),
  fc.constant({}),
  fc.dictionary(
    fc.constantFrom('anthropic', 'openai', 'google'),
    fc.dictionary(
      fc.string({ maxLength: 6 }),
      fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
      {
        maxKeys: 3,
      },
    ),
    { maxKeys: 2 },
  ) as fc.Arbitrary<JsonObject>,
);

/** A part's `provider` member: absent most of the time. */
function withProvider<T extends ContentPart>(part: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc
    .tuple(part, fc.option(provider, { freq: 3, nil: undefined }))
    .map(([value, data]) => (data === undefined ? value : { ...value, provider: data }));
}

const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 12 }));

const textPart = withProvider(fc.record({ type: fc.constant('text' as const), text }));
const reasoningPart = withProvider(fc.record({ type: fc.constant('reasoning' as const), text }));

/** Inputs that are JSON objects, and the non-objects a malformed call keeps on disk. */
const input: fc.Arbitrary<JsonValue> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.dictionary(
      fc.string({ maxLength: 5 }),
      fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
      { maxKeys: 3 },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue> },
);

const output: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
);

/** One block of a conversation: a turn, and for an assistant turn with calls, its answers. */
type Block =
  | { kind: 'user'; parts: ContentPart[] }
  | { kind: 'system'; text: string }
  | {
      kind: 'assistant';
      parts: ContentPart[];
      calls: { input: JsonValue; provider: JsonObject | undefined }[];
      results: { output: JsonValue; isError: boolean; provider: JsonObject | undefined }[];
      /** Shuffles the answers and splits them over tool messages. */
      seed: number;
      emptyToolMessage: boolean;
    }
  | { kind: 'empty-tool' };

const block: fc.Arbitrary<Block> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('user' as const),
      parts: fc.array(textPart, { minLength: 0, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), text }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('assistant' as const),
      parts: fc.array(fc.oneof(textPart, reasoningPart), { maxLength: 3 }),
      calls: fc.array(
        fc.record({ input, provider: fc.option(provider, { freq: 3, nil: undefined }) }),
        { maxLength: 4 },
      ),
      results: fc.array(
        fc.record({
          output,
          isError: fc.boolean(),
          provider: fc.option(provider, { freq: 3, nil: undefined }),
        }),
        { minLength: 4, maxLength: 4 },
      ),
      seed: fc.integer(),
      emptyToolMessage: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty-tool' as const }) },
);

/** The messages of the blocks; call ids unique across the conversation. */
function messagesOf(head: readonly string[], blocks: readonly Block[]): Message[] {
  const messages: Message[] = head.map((words) => system(words));
  let next = 0;
  for (const item of blocks) {
    switch (item.kind) {
      case 'user':
        messages.push(
          item.parts.length === 0 ? user('') : { role: 'user', content: [...item.parts] },
        );
        break;
      case 'system':
        messages.push(system(item.text));
        break;
      case 'empty-tool':
        messages.push({ role: 'tool', content: [] });
        break;
      case 'assistant': {
        const calls = item.calls.map((call, index): ToolCallPart => {
          const part: ToolCallPart = {
            type: 'tool-call',
            callId: `call_${next + index}`,
            toolName: `tool${index}`,
            input: call.input,
          };
          return call.provider === undefined ? part : { ...part, provider: call.provider };
        });
        next += calls.length;
        const random = seededRandom(item.seed);
        // Calls among the text and reasoning, at random places.
        const content = [...item.parts];
        for (const call of calls) {
          content.splice(Math.floor(random() * (content.length + 1)), 0, call);
        }
        messages.push({ role: 'assistant', content });
        if (calls.length === 0) break;
        const answers = calls.map((call, index): ToolResultPart => {
          const answer = item.results[index] as (typeof item.results)[number];
          const part: ToolResultPart = {
            type: 'tool-result',
            callId: call.callId,
            toolName: call.toolName,
            output: answer.output,
            isError: answer.isError,
          };
          return answer.provider === undefined ? part : { ...part, provider: answer.provider };
        });
        shuffleInPlace(answers, random);
        if (item.emptyToolMessage) messages.push({ role: 'tool', content: [] });
        // Split the answers over one or more tool messages, as a run writes them.
        while (answers.length > 0) {
          const take = 1 + Math.floor(random() * answers.length);
          messages.push({ role: 'tool', content: answers.splice(0, take) });
        }
        break;
      }
    }
  }
  return messages;
}

function shuffleInPlace<T>(items: T[], random: () => number): void {
  for (let index = items.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
}

/** The prompt the AI SDK sends a provider for these messages. */
async function sdkPrompt(prompt: ReturnType<typeof toModelPrompt>): Promise<LanguageModelV4Prompt> {
  const received: LanguageModelV4CallOptions[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      received.push(options);
      return {
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: mockUsage(1, 1),
        warnings: [],
      };
    },
  });
  await generateText({
    model,
    messages: prompt.messages,
    ...(prompt.instructions === undefined ? {} : { instructions: prompt.instructions }),
    maxRetries: 0,
  });
  assert.equal(received.length, 1);
  return (received[0] as LanguageModelV4CallOptions).prompt;
}

/** How many conversations held each case the conversion treats specially. */
const features = {
  answersOverSeveralToolMessages: 0,
  emptyToolMessage: 0,
  nonObjectInput: 0,
  emptyUserText: 0,
  emptyAssistantTextWithProvider: 0,
  emptyAssistantTextWithout: 0,
  systemTurnMidway: 0,
};

function countFeatures(view: readonly Message[]): void {
  const seen = new Set<keyof typeof features>();
  view.forEach((message, index) => {
    const previous = view[index - 1];
    if (message.role === 'tool' && message.content.length === 0) seen.add('emptyToolMessage');
    if (message.role === 'tool' && message.content.length > 0 && previous?.role === 'tool') {
      if (previous.content.length > 0) seen.add('answersOverSeveralToolMessages');
    }
    if (message.role === 'system' && view.slice(0, index).some((m) => m.role !== 'system')) {
      seen.add('systemTurnMidway');
    }
    for (const part of message.content) {
      if (
        part.type === 'tool-call' &&
        (typeof part.input !== 'object' || part.input === null || Array.isArray(part.input))
      ) {
        seen.add('nonObjectInput');
      }
      if (part.type !== 'text' || part.text !== '') continue;
      if (message.role === 'user') seen.add('emptyUserText');
      if (message.role === 'assistant') {
        seen.add(
          part.provider === undefined
            ? 'emptyAssistantTextWithout'
            : 'emptyAssistantTextWithProvider',
        );
      }
    }
  });
  for (const name of seen) features[name] += 1;
}

/** Paths of members (or array items) whose value is undefined. */
function undefinedMembers(value: unknown, path = '$'): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, member]) =>
    member === undefined ? [`${path}.${key}`] : undefinedMembers(member, `${path}.${key}`),
  );
}

test('property: toProviderPrompt equals the prompt the AI SDK sends, and concatenates', async () => {
  const seed = Number(process.env.SEED ?? Date.now());
  console.log('seed', seed);
  let checkedSplits = 0;
  let withInstructions = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(text, { maxLength: 2 }),
      fc.array(block, { minLength: 1, maxLength: 10 }),
      fc.constantFrom(undefined, '', 'Be brief.'),
      async (head, blocks, systemPrompt) => {
        // As a transcript holds them: read back from JSON (ordinary objects, no -0).
        const view = JSON.parse(JSON.stringify(messagesOf(head, blocks))) as Message[];
        const prompt = toModelPrompt(view, systemPrompt);
        // The SDK refuses an empty message list; there is nothing to compare then.
        fc.pre(prompt.messages.length > 0);
        if (prompt.instructions !== undefined) withInstructions += 1;
        countFeatures(view);
        const ours = toProviderPrompt(prompt);
        const theirs = await sdkPrompt(prompt);
        assert.deepEqual(ours, JSON.parse(JSON.stringify(theirs)));
        assert.deepEqual(undefinedMembers(ours), []);
        for (let split = 1; split < view.length; split += 1) {
          if ((view[split] as Message).role !== 'assistant') continue;
          const before = view.slice(0, split);
          const after = view.slice(split);
          assert.deepEqual(toProviderMessages(toModelPromptBody(view)), [
            ...toProviderMessages(toModelPromptBody(before)),
            ...toProviderMessages(toModelPromptBody(after)),
          ]);
          checkedSplits += 1;
        }
      },
    ),
    { seed, numRuns: 400 },
  );
  console.log(`${checkedSplits} splits checked, ${withInstructions} prompts with instructions`);
  console.log('features seen', features);
  // The cases where the SDK's conversion does something (merges, drops, keeps) must all occur.
  for (const [name, count] of Object.entries(features)) {
    assert.ok(count > 20, `only ${count} conversations with ${name}`);
  }
  assert.ok(checkedSplits > 400, `only ${checkedSplits} splits checked`);
  assert.ok(withInstructions > 40, `only ${withInstructions} prompts had instructions`);
});
