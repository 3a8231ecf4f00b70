import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { estimateTokens } from '../../src/loop/compaction.ts';
import { toModelPrompt } from '../../src/loop/model-messages.ts';
import { toProviderPrompt } from '../../src/loop/provider-prompt.ts';
import { RunConversation } from '../../src/loop/run-conversation.ts';
import type { LoopMessage } from '../../src/loop/types.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { ToolCallPart } from '../../src/transcript/records.ts';
import { seededRandom } from '../support/seeded-random.ts';

/*
 * RunConversation's incremental prompt is the from-scratch one, whatever happens to the
 * conversation between two model calls: turns answered in any order or not at all, call ids
 * reused or malformed, stray and duplicate results, user, background and system turns,
 * compactions of any range, a system prompt that changes. The reference is what the Loop
 * computed before it kept anything: normalize the whole conversation, check it, convert it.
 */

type CallKind = 'fresh' | 'reuse' | 'invalid' | 'twice';

type Operation =
  | { kind: 'turn'; calls: CallKind[]; seed: number; delivery: boolean }
  | { kind: 'assistant'; text: boolean; calls: CallKind[] }
  | { kind: 'answer'; seed: number; skipOne: boolean }
  | { kind: 'stray'; seed: number }
  | { kind: 'user'; injected: 'background' | 'revival' | undefined }
  | { kind: 'system' }
  | { kind: 'compact'; start: number; count: number }
  | { kind: 'prompt'; system: string | undefined }
  | { kind: 'prepare' };

const callKinds = fc.array(
  fc.oneof(
    { weight: 150, arbitrary: fc.constant<CallKind>('fresh') },
    { weight: 1, arbitrary: fc.constant<CallKind>('reuse') },
    { weight: 2, arbitrary: fc.constant<CallKind>('invalid') },
    { weight: 1, arbitrary: fc.constant<CallKind>('twice') },
  ),
  { maxLength: 3 },
);

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    // What a run does between two model calls: its turn, the results in any order, perhaps
    // a background delivery, then the next prompt.
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant('turn' as const),
      calls: callKinds,
      seed: fc.integer(),
      delivery: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('assistant' as const),
      text: fc.boolean(),
      calls: callKinds,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('answer' as const),
      seed: fc.integer(),
      skipOne: fc.integer({ min: 0, max: 9 }).map((roll) => roll === 0),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stray' as const), seed: fc.integer() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('user' as const),
      injected: fc.constantFrom('background' as const, 'revival' as const, undefined),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'system' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      start: fc.double({ min: 0, max: 1, noNaN: true }),
      count: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('prompt' as const),
      system: fc.constantFrom(undefined, 'Be brief.', 'Be thorough.'),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'prepare' as const }) },
);

/** Applies operations to a conversation, as a run (or a caller before it) would. */
class Script {
  calls: string[] = [];
  system: string | undefined;
  #seq = 0;

  constructor(system: string | undefined) {
    this.system = system;
  }

  /** The messages `operation` appends (none for prepare, prompt and compact). */
  messagesFor(operation: Operation, messages: readonly LoopMessage[]): LoopMessage[] {
    switch (operation.kind) {
      case 'turn': {
        const turn = this.messagesFor(
          { kind: 'assistant', text: true, calls: operation.calls },
          [],
        );
        const answers = this.messagesFor(
          { kind: 'answer', seed: operation.seed, skipOne: false },
          turn,
        );
        const delivery = operation.delivery
          ? this.messagesFor({ kind: 'user', injected: 'background' }, [])
          : [];
        return [...turn, ...answers, ...delivery];
      }
      case 'assistant': {
        const content: LoopMessage['content'] = operation.text
          ? [{ type: 'text', text: `thinking ${this.#seq}` }]
          : [];
        for (const kind of operation.calls) {
          const callId = this.#callId(kind);
          content.push(this.#call(callId));
          if (kind === 'twice') content.push(this.#call(callId));
        }
        return [this.#message({ role: 'assistant', content })];
      }
      case 'answer': {
        const turn = messages.findLast((message) => message.role === 'assistant');
        const calls = (turn?.content ?? []).filter(
          (part): part is ToolCallPart => part.type === 'tool-call',
        );
        const shuffled = shuffle(calls, seededRandom(operation.seed));
        if (operation.skipOne) shuffled.pop();
        return shuffled.map((call) => this.#result(call.callId));
      }
      case 'stray': {
        const random = seededRandom(operation.seed);
        const callId = this.calls[Math.floor(random() * this.calls.length)] ?? 'never-asked';
        return [this.#result(callId)];
      }
      case 'user':
        return [
          this.#message({
            role: 'user',
            content: [{ type: 'text', text: `user ${this.#seq}` }],
            ...(operation.injected === undefined
              ? {}
              : { extras: { injected: operation.injected } }),
          }),
        ];
      case 'system':
        return [this.#message({ role: 'system', content: [{ type: 'text', text: 'Rules.' }] })];
      default:
        return [];
    }
  }

  summary(): LoopMessage {
    return this.#message({
      role: 'user',
      content: [{ type: 'text', text: `summary ${this.#seq}` }],
      extras: { injected: 'compaction' },
    });
  }

  #callId(kind: CallKind): string {
    const earlier = this.calls[this.#seq % Math.max(this.calls.length, 1)];
    const callId =
      kind === 'reuse' && earlier !== undefined
        ? earlier
        : kind === 'invalid'
          ? `call.${this.#seq}`
          : `call_${this.#seq}`;
    this.#seq += 1;
    this.calls.push(callId);
    return callId;
  }

  #call(callId: string): ToolCallPart {
    return { type: 'tool-call', callId, toolName: 'work', input: { n: this.#seq } };
  }

  #result(callId: string): LoopMessage {
    return this.#message({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId,
          toolName: 'work',
          output: `done ${this.#seq}`,
          isError: this.#seq % 7 === 0,
        },
      ],
    });
  }

  #message(message: LoopMessage): LoopMessage {
    this.#seq += 1;
    return { ...message, seq: this.#seq };
  }
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const result = [...items];
  for (let index = result.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [result[index], result[other]] = [result[other] as T, result[index] as T];
  }
  return result;
}

/** The prompt as the Loop computed it before it kept anything between calls. */
function fromScratch(messages: readonly LoopMessage[], system: string | undefined) {
  const view = normalizeConversation(messages);
  const problem = pairingViolations(view, 'anthropic').find(
    (violation) => violation.code !== 'invalid-call-id',
  );
  if (problem !== undefined) {
    return { ok: false, detail: `message ${problem.index}: ${problem.message}` };
  }
  return { ok: true, prompt: toProviderPrompt(toModelPrompt(view, system)) };
}

test('property: the incremental prompt equals the from-scratch one over random conversations', () => {
  const seed = Number(process.env.SEED ?? Date.now());
  console.log('seed', seed);
  let prepared = 0;
  let extended = 0;
  let refused = 0;
  fc.assert(
    fc.property(
      fc.array(operation, { maxLength: 12 }),
      fc.array(operation, { minLength: 10, maxLength: 80 }),
      fc.constantFrom(undefined, 'Be brief.'),
      (opening, operations, system) => {
        const script = new Script(system);
        const initial: LoopMessage[] = [];
        for (const step of opening) initial.push(...script.messagesFor(step, initial));
        const conversation = new RunConversation(initial);
        for (const step of operations) {
          if (step.kind === 'prompt') {
            script.system = step.system;
          } else if (step.kind === 'compact') {
            const length = conversation.messages.length;
            const start = Math.floor(step.start * length);
            const count = Math.floor(step.count * (length - start));
            conversation.replace(start, count, script.summary());
          } else if (step.kind === 'prepare' || step.kind === 'turn') {
            if (step.kind === 'turn') {
              for (const message of script.messagesFor(step, conversation.messages)) {
                conversation.append(message);
              }
            }
            const kept = conversation.sentView() !== null;
            const actual = conversation.prepare(script.system);
            const expected = fromScratch(conversation.messages, script.system);
            assert.deepEqual(actual, expected);
            prepared += 1;
            if (!actual.ok) refused += 1;
            else if (kept) extended += 1;
            const view = conversation.sentView();
            if (actual.ok && view !== null) {
              assert.deepEqual(view, normalizeConversation(conversation.messages));
            }
            assert.equal(
              conversation.estimatedTokens(script.system),
              estimateTokens(conversation.messages, script.system),
            );
          } else {
            for (const message of script.messagesFor(step, conversation.messages)) {
              conversation.append(message);
            }
          }
        }
      },
    ),
    { seed, numRuns: 300 },
  );
  console.log(`prepared ${prepared}: ${extended} extended a kept view, ${refused} refused`);
  // The shortcut and the refusals must both be exercised, or this test proves nothing.
  assert.ok(extended > prepared / 10, `only ${extended} of ${prepared} prompts extended a view`);
  assert.ok(refused > prepared / 50, `only ${refused} of ${prepared} prompts were refused`);
});

test('a reused call id is refused with the whole view’s message index, as from scratch', () => {
  const call = (callId: string): ToolCallPart => ({
    type: 'tool-call',
    callId,
    toolName: 'work',
    input: {},
  });
  const result = (callId: string): LoopMessage => ({
    role: 'tool',
    content: [{ type: 'tool-result', callId, toolName: 'work', output: 'ok', isError: false }],
  });
  const conversation = new RunConversation([
    { role: 'user', content: [{ type: 'text', text: 'go' }] },
  ]);
  conversation.append({ role: 'assistant', content: [call('call_0')] });
  conversation.append(result('call_0'));
  assert.equal(conversation.prepare().ok, true);
  assert.notEqual(conversation.sentView(), null);
  conversation.append({ role: 'assistant', content: [call('call_0')] });
  conversation.append(result('call_0'));
  const prompt = conversation.prepare();
  assert.deepEqual(prompt, fromScratch(conversation.messages, undefined));
  assert.deepEqual(prompt, {
    ok: false,
    detail: 'message 3: `tool_use` ids must be unique',
  });
});
