import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type LanguageModel, MissingToolResultsError } from 'ai';
import fc from 'fast-check';
import { toModelMessages } from '../../src/loop/model-messages.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import { type PairingRules, pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { Message } from '../../src/transcript/records.ts';
import { assistant, call, result, tool, user } from './conversation-builders.ts';

/*
 * pairingViolations judges our messages "as the AI SDK would send them". This test holds it to
 * that: random conversations go through the real AI SDK and provider packages to a fetch that
 * keeps the request body, and the wire is checked by small checkers written against the
 * providers' wire formats. For pairing (ids here are unique and valid), our verdict and the
 * wire's must agree exactly. A conversation the SDK itself refuses (AI_MissingToolResultsError)
 * must be one we flag, naming the same calls.
 */

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

type Body = Record<string, unknown>;

/** A model whose every request is captured and refused, so nothing leaves the process. */
function capturing(make: (fetch: typeof globalThis.fetch) => LanguageModel) {
  const bodies: Body[] = [];
  const fetch = (async (_url: unknown, init?: RequestInit) => {
    bodies.push(JSON.parse(String(init?.body)) as Body);
    return new Response(JSON.stringify({ error: { message: 'captured', type: 'test' } }), {
      status: 400,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof globalThis.fetch;
  return { model: make(fetch), bodies };
}

type Block = { type: string; id?: string; tool_use_id?: string };
type WireMessage = { role: string; content?: unknown; tool_calls?: { id: string }[] } & Body;

/** Anthropic's rules on the wire: results first in the next message, each once, none extra. */
function anthropicWireProblem(messages: WireMessage[]): boolean {
  const blocks = (message: WireMessage | undefined): Block[] =>
    Array.isArray(message?.content) ? (message.content as Block[]) : [];
  return messages.some((message, index) => {
    if (message.role === 'assistant') {
      const uses = blocks(message).flatMap((block) =>
        block.type === 'tool_use' ? [block.id] : [],
      );
      if (uses.length === 0) return false;
      const next = messages[index + 1];
      const leading: (string | undefined)[] = [];
      for (const block of blocks(next)) {
        if (block.type !== 'tool_result') break;
        leading.push(block.tool_use_id);
      }
      return next?.role !== 'user' || uses.some((id) => !leading.includes(id));
    }
    const previous = messages[index - 1];
    const uses = new Set(
      previous?.role === 'assistant'
        ? blocks(previous).flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [],
    );
    const results = blocks(message).flatMap((block, position) =>
      block.type === 'tool_result' ? [{ id: block.tool_use_id, position }] : [],
    );
    return results.some(
      (entry, order) =>
        !uses.has(entry.id) ||
        entry.position !== order ||
        results.findIndex((other) => other.id === entry.id) !== order,
    );
  });
}

/** Chat Completions' rules on the wire: one tool message per call right after its turn. */
function chatWireProblem(messages: WireMessage[]): boolean {
  return messages.some((message, index) => {
    if (message.role === 'tool') {
      let owner = index - 1;
      while (messages[owner]?.role === 'tool') owner -= 1;
      const calls = messages[owner]?.tool_calls?.map((entry) => entry.id) ?? [];
      const id = message.tool_call_id;
      const earlier = messages.slice(owner + 1, index).some((other) => other.tool_call_id === id);
      return messages[owner]?.role !== 'assistant' || !calls.includes(String(id)) || earlier;
    }
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    const answered = new Set<unknown>();
    for (let next = index + 1; messages[next]?.role === 'tool'; next += 1) {
      answered.add(messages[next]?.tool_call_id);
    }
    return calls.some((entry) => !answered.has(entry.id));
  });
}

/** Responses' rules on the wire: each call_id called once and answered once, call first. */
function responsesWireProblem(items: Body[]): boolean {
  const calls = new Set<unknown>();
  const outputs = new Set<unknown>();
  for (const item of items) {
    if (item.type === 'function_call') {
      if (calls.has(item.call_id)) return true;
      calls.add(item.call_id);
    } else if (item.type === 'function_call_output') {
      if (!calls.has(item.call_id) || outputs.has(item.call_id)) return true;
      outputs.add(item.call_id);
    }
  }
  return [...calls].some((id) => !outputs.has(id));
}

const providers: {
  rules: PairingRules;
  make: (fetch: typeof globalThis.fetch) => LanguageModel;
  problem: (body: Body) => boolean;
}[] = [
  {
    rules: 'anthropic',
    make: (fetch) => createAnthropic({ apiKey: 'test', fetch })('claude-sonnet-4-5'),
    problem: (body) => anthropicWireProblem(body.messages as WireMessage[]),
  },
  {
    rules: 'openai-chat',
    make: (fetch) => createOpenAI({ apiKey: 'test', fetch }).chat('gpt-4o'),
    problem: (body) => chatWireProblem(body.messages as WireMessage[]),
  },
  {
    rules: 'openai-responses',
    make: (fetch) => createOpenAI({ apiKey: 'test', fetch }).responses('gpt-4o'),
    problem: (body) => responsesWireProblem(body.input as Body[]),
  },
];

/** How often each path was taken, so the test can insist it tried them all. */
const reached = { refusedBySdk: 0, wireClean: 0, wireBroken: 0 };

/** Pairing violations only: ids here are unique and valid, so id checks stay silent. */
async function compare(messages: Message[]): Promise<void> {
  // The SDK wants a user turn before anything the model said.
  const prompt: Message[] = [user('start'), ...messages];
  for (const provider of providers) {
    const ours = pairingViolations(prompt, provider.rules);
    const { model, bodies } = capturing(provider.make);
    try {
      await generateText({ model, messages: toModelMessages(prompt), maxRetries: 0 });
      assert.fail('the capturing fetch refuses every request');
    } catch (error) {
      if (MissingToolResultsError.isInstance(error)) {
        // The SDK refuses before the wire: a call not answered before the next user or system
        // turn. Anthropic and Chat must name it too (Responses pairs by id anywhere).
        if (provider.rules !== 'openai-responses') {
          for (const id of error.toolCallIds) {
            assert.ok(
              ours.some((violation) => violation.callId === id),
              `${provider.rules}: the SDK refused unanswered ${id}, we did not flag it`,
            );
          }
        }
        reached.refusedBySdk += 1;
        continue;
      }
    }
    const body = bodies[0];
    assert.ok(body !== undefined, `${provider.rules}: no request was captured`);
    const broken = provider.problem(body);
    if (broken) reached.wireBroken += 1;
    else reached.wireClean += 1;
    assert.equal(
      ours.length > 0,
      broken,
      `${provider.rules}: ours ${JSON.stringify(ours.map((violation) => violation.code))} vs the wire`,
    );
  }
}

type Step =
  | { kind: 'assistant'; calls: number }
  | { kind: 'tool'; picks: number[] }
  | { kind: 'user' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('assistant' as const), calls: fc.nat(3) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tool' as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    }),
  },
  // No system messages: AI SDK 7 refuses them in `messages` (they go in `instructions`).
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('user' as const) }) },
);

function conversation(steps: Step[]): Message[] {
  const asked: string[] = [];
  return steps.map((item) => {
    if (item.kind === 'assistant') {
      const ids = Array.from(
        { length: item.calls },
        (_, offset) => `call_${asked.length + offset}`,
      );
      asked.push(...ids);
      return assistant('thinking', ...ids.map((id) => call(id)));
    }
    if (item.kind === 'tool') {
      // Mostly answers to calls asked so far; sometimes a call asked later (an orphan here).
      const pool = [...asked, `call_${asked.length}`];
      return tool(...item.picks.map((pick) => result(pool[pick % pool.length] ?? 'call_0')));
    }
    return user('more');
  });
}

test('our verdict matches the wire, for random conversations and their normalized views', async () => {
  let violating = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 10 }), async (steps) => {
      const messages = conversation(steps);
      await compare(messages);
      await compare(normalizeConversation(messages));
      if (pairingViolations(messages).length > 0) violating += 1;
    }),
    { seed, numRuns: 80 },
  );
  assert.ok(violating > 20, `only ${violating} conversations broke a rule`);
  for (const [path, count] of Object.entries(reached)) {
    assert.ok(count > 20, `only ${count} comparisons took the path ${path}`);
  }
});

test('hand-picked shapes agree with the wire', async () => {
  const shapes: Message[][] = [
    [assistant(call('a'), call('b')), tool(result('b'), result('a')), user('next')],
    [assistant(call('a')), tool(result('a')), user('background'), assistant('ok')],
    [assistant(call('a'), call('b')), tool(result('a')), user('x'), tool(result('b'))],
    [assistant(call('a')), assistant(call('b')), tool(result('a'), result('b'))],
    [assistant(call('a')), tool(result('a')), tool(result('a'))],
    [assistant(call('a')), tool(result('a'), result('zz'))],
  ];
  for (const shape of shapes) await compare(shape);
});
