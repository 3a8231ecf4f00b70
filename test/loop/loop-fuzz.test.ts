import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import type { TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { assertWriteOrder, type LogEntry, RecordingFileSystem } from './support/harness.ts';
import { ScriptedModel, type ScriptStep } from '../../src/testing/index.ts';

/*
 * The run handle never rejects, whatever the model asks and however tools and backends
 * misbehave: random scripts (valid, invalid and unknown calls, HTTP and network failures, the
 * script running out), tools that throw anything or return values JSON cannot hold, and aborts
 * at random moments. Every run ends in a known status, keeps the write order, and leaves a
 * transcript whose conversation view pairs every call with its answer unless it was aborted
 * with a tool in flight.
 */

const circular: { self?: unknown } = {};
circular.self = circular;

const weirdValues: unknown[] = [
  undefined,
  10n,
  circular,
  () => 1,
  new Date(0),
  Symbol('s'),
  { nested: [1, 'two', null] },
];
const thrownValues: unknown[] = [new Error('boom'), 'a string', undefined, { code: 42 }, null];

function tools(log: LogEntry[], pick: number): ToolDefinition<{ n: number }>[] {
  const schema = z.object({ n: z.number() });
  const effect = (callId: string) => log.push({ kind: 'effect', callId, what: 'start' });
  return [
    {
      name: 'good',
      description: 'ok',
      inputSchema: schema,
      idempotency: 'read-only',
      execute: async ({ n }, { callId }) => {
        effect(callId);
        return n * 2;
      },
    },
    {
      name: 'throws',
      description: 'throws',
      inputSchema: schema,
      idempotency: 'side-effect',
      execute: async (_input, { callId }) => {
        effect(callId);
        throw thrownValues[pick % thrownValues.length];
      },
    },
    {
      name: 'failure',
      description: 'fails',
      inputSchema: schema,
      idempotency: 'idempotent',
      execute: async (_input, { callId }) => {
        effect(callId);
        return { isError: true, output: 'nope' };
      },
    },
    {
      name: 'weird',
      description: 'returns odd values',
      inputSchema: schema,
      idempotency: 'read-only',
      execute: async ({ n }, { callId }) => {
        effect(callId);
        return weirdValues[Math.abs(n) % weirdValues.length] as never;
      },
    },
  ];
}

const callArbitrary = fc.record({
  name: fc.constantFrom('good', 'throws', 'failure', 'weird', 'missing'),
  input: fc.oneof(
    fc.record({ n: fc.integer({ min: -50, max: 50 }) }),
    fc.constant({ n: 'not a number' }),
    fc.constant({}),
  ),
});

type RawStep =
  | { text: string; calls: { name: string; input: object }[] }
  | Exclude<ScriptStep, { calls?: unknown }>;

const stepArbitrary: fc.Arbitrary<RawStep> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      text: fc.string({ maxLength: 20 }),
      calls: fc.array(callArbitrary, { maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(500, 429, 400, 503)
      .map((status) => ({ fail: 'http' as const, status })),
  },
  { weight: 1, arbitrary: fc.constant({ fail: 'network' as const }) },
);

test('fuzz: a run never rejects and always leaves a transcript in order', async () => {
  const seed = Number(process.env.SEED ?? Date.now());
  console.log('seed', seed);
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArbitrary, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
      async (rawSteps, pick, abortAtEvent) => {
        runs += 1;
        let callNumber = 0;
        const steps = rawSteps.map((step): ScriptStep => {
          if (!('calls' in step)) return step;
          return {
            text: step.text,
            calls: step.calls.map((call) => {
              callNumber += 1;
              return { ...call, id: `call_${callNumber}` };
            }),
          };
        });
        const log: LogEntry[] = [];
        const memory = new MemoryFileSystem();
        const fileSystem = new RecordingFileSystem(log, memory);
        const path = '/runs/fuzz.jsonl';
        const session = await Session.create(
          path,
          { agentId: 'main', agentType: 'main', label: 'main', model: 'scripted' },
          { fileSystem },
        );
        const model = new ScriptedModel(steps);
        const loop = new Loop({
          backends: [model.model],
          writer: session,
          tools: tools(log, pick),
          maxTurns: 5,
          backendRounds: 1,
          sleep: async () => undefined,
        });
        const run = loop.start('fuzz');
        let seen = 0;
        for await (const _event of run) {
          seen += 1;
          if (abortAtEvent !== undefined && seen === abortAtEvent) run.abort();
        }
        const result = await run;
        await session.close();
        assert.ok(['finished', 'failed', 'aborted', 'max-turns'].includes(result.status));
        assert.deepEqual(model.violations, []);
        assertWriteOrder(log);
        const records: TranscriptRecord[] = [];
        for await (const record of readRecords(path, { fileSystem: memory })) {
          records.push(record as TranscriptRecord);
        }
        if (result.status === 'finished') {
          const last = records.findLast((record) => record.type === 'message');
          assert.ok(last?.type === 'message' && last.role === 'assistant');
          assert.ok(!last.content.some((part) => part.type === 'tool-call'));
        }
        if (result.status !== 'aborted') {
          assert.deepEqual(pairingViolations(conversationView(records)), []);
        }
      },
    ),
    { seed, numRuns: 80 },
  );
  assert.equal(runs >= 80, true);
});
