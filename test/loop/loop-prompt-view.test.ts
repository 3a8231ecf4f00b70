import assert from 'node:assert/strict';
import { test } from 'node:test';
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { generateText } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { toModelPrompt } from '../../src/loop/model-messages.ts';
import type { LoopMessage, RunHandle, RunResult, ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import type { Message, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { httpError, pairingProblems } from '../../src/testing/index.ts';

/*
 * The Loop keeps the view and the provider prompt of what it already sent, and converts only
 * what it appended since (src/loop/run-conversation.ts). This proves, over random runs, that
 * every prompt a model receives is exactly the one derived from scratch from the transcript
 * at that moment: `toModelPrompt(conversationView(records), system)`, through the AI SDK's own
 * conversion (generateText's), which the loop no longer calls (it calls `doStream` itself). The runs mix parallel calls finishing in any order, background deliveries,
 * compactions, a first backend that fails over to the second, and a revival (after the run
 * stops at its turn limit, or is aborted with a tool in flight) that a second Loop carries on.
 */

const SUMMARY_SYSTEM = 'You compact the history';
const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

interface Step {
  calls: { slow: boolean; delay: number; size: number }[];
  failFirst: boolean;
}

/** What the runs share: the script, the transcript to derive prompts from, what went wrong. */
class World {
  readonly memory = new MemoryFileSystem();
  readonly path = '/runs/view.jsonl';
  readonly mismatches: string[] = [];
  readonly system: string | undefined;
  readonly steps: Step[];
  prompts = 0;
  failovers = 0;
  summaries = 0;
  #callNumber = 0;
  #failedThisStep = false;
  /** Set while a run is going, so that a slow tool can abort it. */
  run: RunHandle | null = null;

  constructor(steps: Step[], system: string | undefined) {
    this.steps = steps;
    this.system = system;
  }

  model(backend: number): MockLanguageModelV4 {
    return new MockLanguageModelV4({
      provider: `backend-${backend}`,
      modelId: `backend-${backend}`,
      doStream: async (options) => ({
        stream: convertArrayToReadableStream(await this.#answer(backend, options)),
      }),
    });
  }

  async #answer(
    backend: number,
    options: LanguageModelV4CallOptions,
  ): Promise<LanguageModelV4StreamPart[]> {
    const first = options.prompt[0];
    if (first?.role === 'system' && first.content.startsWith(SUMMARY_SYSTEM)) {
      this.summaries += 1;
      return textParts(`Summary ${this.summaries}: work was done.`);
    }
    this.prompts += 1;
    const expected = await this.#expectedPrompt();
    try {
      // The SDK writes `providerOptions: undefined` where the loop leaves the member out; no
      // provider sends an undefined member, so those are dropped from the expected prompt only.
      assert.deepEqual(options.prompt, withoutUndefinedMembers(expected));
    } catch (error) {
      this.mismatches.push(`prompt ${this.prompts}: ${(error as Error).message.slice(0, 2000)}`);
    }
    for (const problem of pairingProblems(options.prompt)) this.mismatches.push(problem);
    const step = this.steps[0];
    if (step === undefined) return textParts('All done.');
    if (backend === 0 && step.failFirst && !this.#failedThisStep) {
      this.#failedThisStep = true;
      this.failovers += 1;
      throw httpError(503);
    }
    this.steps.shift();
    this.#failedThisStep = false;
    const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
    for (const call of step.calls) {
      this.#callNumber += 1;
      parts.push({
        type: 'tool-call',
        toolCallId: `call_${this.#callNumber}`,
        toolName: call.slow ? 'slow' : 'work',
        input: JSON.stringify({ delay: call.delay, size: call.size }),
      });
    }
    if (step.calls.length === 0) return textParts('Nothing to do.');
    parts.push({ type: 'finish', usage: USAGE, finishReason: { unified: 'tool-calls', raw: '' } });
    return parts;
  }

  /** The prompt derived from scratch from the transcript as it is now, as the SDK sends it. */
  async #expectedPrompt(): Promise<LanguageModelV4Prompt> {
    const records: TranscriptRecord[] = [];
    for await (const record of readRecords(this.path, { fileSystem: this.memory })) {
      records.push(record as TranscriptRecord);
    }
    const prompt = toModelPrompt(conversationView(records), this.system);
    let captured: LanguageModelV4Prompt = [];
    const capture = new MockLanguageModelV4({
      doGenerate: async (options) => {
        captured = options.prompt;
        return {
          content: [{ type: 'text', text: '' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      },
    });
    await generateText({
      model: capture,
      messages: prompt.messages,
      ...(prompt.instructions === undefined ? {} : { instructions: prompt.instructions }),
      maxRetries: 0,
    });
    return captured;
  }

  tools(): ToolDefinition<{ delay: number; size: number }>[] {
    const schema = z.object({ delay: z.number(), size: z.number() });
    const work: ToolDefinition<{ delay: number; size: number }> = {
      name: 'work',
      description: 'Work for a while.',
      inputSchema: schema,
      idempotency: 'idempotent',
      execute: async ({ delay, size }) => {
        for (let tick = 0; tick < delay; tick += 1) await new Promise(setImmediate);
        return `worked ${'.'.repeat(size)}`;
      },
    };
    const slow: ToolDefinition<{ delay: number; size: number }> = {
      ...work,
      name: 'slow',
      description: 'Never finishes: the process dies (the run is aborted) while it runs.',
      idempotency: 'side-effect',
      execute: async (_input, { signal }) => {
        this.run?.abort();
        if (!signal.aborted) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        }
        throw new Error('interrupted');
      },
    };
    return [work, slow];
  }
}

function textParts(text: string): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: text },
    { type: 'text-end', id: 't' },
    { type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: 'stop' } },
  ];
}

const stepArbitrary: fc.Arbitrary<Step> = fc.record({
  calls: fc.array(
    fc.record({
      slow: fc.integer({ min: 0, max: 30 }).map((roll) => roll === 0),
      delay: fc.integer({ min: 0, max: 4 }),
      size: fc.integer({ min: 0, max: 300 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  failFirst: fc.integer({ min: 0, max: 5 }).map((roll) => roll === 0),
});

test('every prompt a model receives is the one derived from scratch from the transcript', {
  timeout: 120_000,
}, async () => {
  const seed = Number(process.env.SEED ?? Date.now());
  console.log('seed', seed);
  const totals = { prompts: 0, failovers: 0, summaries: 0, deliveries: 0, revivals: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArbitrary, { minLength: 2, maxLength: 14 }),
      fc.integer({ min: 1, max: 8 }),
      fc.option(fc.integer({ min: 120, max: 1200 }), { nil: undefined }),
      fc.constantFrom(undefined, 'Be brief.'),
      fc.integer(),
      async (steps, firstTurns, maxTokens, system, deliverySeed) => {
        const world = new World(steps, system);
        const random = seededRandom(deliverySeed);
        const takeDeliveries = (): Message[] => {
          if (random() > 0.3) return [];
          totals.deliveries += 1;
          return [
            {
              role: 'user',
              content: [{ type: 'text', text: `[background event] child ${random()} ended` }],
              extras: { injected: 'background' },
            },
          ];
        };
        const options = (session: Session, maxTurns: number) => ({
          backends: [world.model(0), world.model(1)],
          writer: session,
          tools: world.tools() as ToolDefinition<never>[],
          maxTurns,
          backendRounds: 1,
          takeDeliveries,
          sleep: async () => undefined,
          ...(system === undefined ? {} : { system }),
          ...(maxTokens === undefined ? {} : { compaction: { maxTokens, keepRecent: 2 } }),
        });
        const session = await Session.create(
          world.path,
          { agentId: 'main', agentType: 'main', label: 'main', model: 'mock' },
          { fileSystem: world.memory },
        );
        const first = new Loop(options(session, firstTurns)).start('Work through the plan.');
        world.run = first;
        const firstResult: RunResult = await first;
        world.run = null;
        let second: RunResult | undefined;
        if (firstResult.status === 'max-turns' || firstResult.status === 'aborted') {
          const revived = await Revival.revive({
            session,
            agentId: 'main',
            maxRevivals: 5,
            fileSystem: world.memory,
          });
          assert.equal(revived.ok, true, revived.ok ? '' : revived.detail);
          if (revived.ok) {
            totals.revivals += 1;
            const messages: LoopMessage[] = revived.messages;
            const loop = new Loop(options(session, 40));
            world.run = loop.run(messages);
            second = await world.run;
          }
        }
        await session.close();
        const last = second ?? firstResult;
        assert.ok(
          ['finished', 'max-turns', 'aborted'].includes(last.status),
          `${last.status}: ${last.error}`,
        );
        assert.deepEqual(world.mismatches, []);
        totals.prompts += world.prompts;
        totals.failovers += world.failovers;
        totals.summaries += world.summaries;
      },
    ),
    { seed, numRuns: 40 },
  );
  console.log(totals);
  // Each ingredient must have happened, or the property proves less than it says.
  for (const [what, count] of Object.entries(totals)) assert.ok(count > 0, `no ${what}`);
});

function withoutUndefinedMembers<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
