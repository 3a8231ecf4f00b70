import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { APICallError, StreamProviderError } from 'ai';
import fc from 'fast-check';
import { classifyModelError } from '../../src/loop/call-model.ts';
import { TurnCollector } from '../../src/loop/turn-collector.ts';
import { mockUsage } from '../support/mock-usage.ts';
import { viaStreamText } from './support/stream-text-reference.ts';

/*
 * An `error` part, whatever its shape: the error the collector reports is the one streamText
 * reported (the loop before ff2605f), as the loop sees it — class, words, status, retry verdict.
 */

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

// streamText prints the stream's warnings to the console.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

// ---------------------------------------------------------------------------------------------
// Error parts
// ---------------------------------------------------------------------------------------------

/** An error as the Anthropic and OpenAI providers send it (`createProviderStreamError`). */
function markedByProvider(fields: {
  message: string;
  type?: string;
  code?: string | number;
  statusCode?: number;
  isRetryable?: boolean;
  data?: unknown;
}): object {
  const error = {
    message: fields.message,
    type: fields.type,
    code: fields.code,
    statusCode: fields.statusCode,
    isRetryable: fields.isRetryable,
    data: fields.data,
  };
  Object.defineProperty(error, Symbol.for('vercel.ai.providerStreamError'), { value: true });
  return error;
}

const finishPart: LanguageModelV4StreamPart = {
  type: 'finish',
  usage: mockUsage(5, 2),
  finishReason: { unified: 'stop', raw: 'end_turn' },
};

function failingStream(error: unknown, finished: boolean): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: '0' },
    { type: 'text-delta', id: '0', delta: 'Sta' },
    { type: 'error', error },
    ...(finished ? [finishPart] : []),
  ];
}

/** The first `error` part of streamText's fullStream: what the loop reported before. */
async function streamTextError(parts: readonly LanguageModelV4StreamPart[]): Promise<unknown[]> {
  return (await viaStreamText(parts)).errors;
}

function collectorError(parts: readonly LanguageModelV4StreamPart[]): unknown {
  const collector = new TurnCollector();
  for (const part of parts) collector.add(part);
  assert.equal(collector.failed, true);
  const turn = collector.finish();
  assert.equal(turn.ok, false);
  return turn.ok ? undefined : turn.error;
}

/** The same error, as the loop sees one: its class, words, status and retry verdict. */
function assertSameError(ours: unknown, reference: unknown, payload: unknown): void {
  assert.equal(classifyModelError(ours), classifyModelError(reference), 'classification');
  if (!StreamProviderError.isInstance(reference)) {
    // Errors and payloads without a message: passed on as they came, the very same value.
    assert.ok(Object.is(ours, reference), 'the value itself is reported');
    assert.ok(Object.is(ours, payload), 'the payload itself is reported');
    return;
  }
  assert.ok(StreamProviderError.isInstance(ours), 'a StreamProviderError');
  assert.equal(ours.message, reference.message);
  assert.equal(ours.statusCode, reference.statusCode);
  assert.equal(ours.isRetryable, reference.isRetryable);
  assert.equal(ours.type, reference.type);
  assert.equal(ours.code, reference.code);
  assert.ok(Object.is(ours.data, reference.data), 'the same payload as data');
}

const realisticErrors: [string, unknown, 'retry' | 'fatal'][] = [
  ['Anthropic overloaded_error', { type: 'overloaded_error', message: 'Overloaded' }, 'retry'],
  [
    'Anthropic invalid_request_error',
    { type: 'invalid_request_error', message: 'prompt is too long' },
    'fatal',
  ],
  [
    'OpenAI-style rate limit',
    { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
    'fatal',
  ],
  ['a status of 503', { message: 'x', status: 503 }, 'retry'],
  ['a statusCode of 400', { message: 'x', statusCode: 400 }, 'fatal'],
  ['an implied 500', { message: 'internal server error' }, 'retry'],
  ['a plain string', 'upstream connect error', 'retry'],
  ['an Error', new Error('socket hang up'), 'retry'],
  [
    'an APICallError',
    new APICallError({ message: 'busy', url: 'https://x', requestBodyValues: {}, statusCode: 529 }),
    'retry',
  ],
  [
    'the Anthropic provider, overloaded',
    markedByProvider({
      message: 'Overloaded',
      type: 'overloaded_error',
      statusCode: 529,
      isRetryable: true,
      data: { type: 'overloaded_error', message: 'Overloaded' },
    }),
    'retry',
  ],
  [
    'the OpenAI provider, a server error',
    markedByProvider({
      message: 'The server had an error',
      type: 'server_error',
      code: 'server_error',
      statusCode: 500,
      isRetryable: true,
      data: { type: 'error', error: { type: 'server_error' } },
    }),
    'retry',
  ],
  ['a payload without a message', { type: 'api_error' }, 'retry'],
  ['null', null, 'retry'],
  ['snake_case status', { message: 'x', status_code: 503, is_retryable: true }, 'retry'],
  ['an outer type and code', { type: 'error', code: 'E1', error: { message: 'm' } }, 'fatal'],
  ['a status outside 400-599', { message: 'x', statusCode: 200 }, 'fatal'],
  ['an implied 503 beside a 400', { message: 'Overloaded', status: 400 }, 'fatal'],
];

test('an error part: the collector reports the error streamText reported', async (t) => {
  for (const [name, payload, kind] of realisticErrors) {
    await t.test(name, async () => {
      for (const finished of [true, false]) {
        const parts = failingStream(payload, finished);
        const [reference] = await streamTextError(parts);
        const ours = collectorError(parts);
        assertSameError(ours, reference, payload);
        assert.equal(classifyModelError(ours), kind);
      }
    });
  }
});

const status = fc.oneof(
  fc.integer({ min: 100, max: 700 }),
  fc.constantFrom(400, 408, 409, 429, 500, 503, 529, '503', '429', ' 503', 503.5),
);
const message = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    'Overloaded',
    ' overloaded error ',
    'Service Unavailable',
    'Internal Server Error',
  ),
  fc.constant(42),
);

/** Error payloads of every shape the SDK's normalizer reads, each field present or not. */
const errorPayload: fc.Arbitrary<unknown> = fc.letrec<{ payload: unknown; fields: object }>(
  (tie) => ({
    fields: fc.record(
      {
        message,
        type: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(7)),
        code: fc.oneof(fc.string({ maxLength: 4 }), status),
        status,
        statusCode: status,
        status_code: status,
        isRetryable: fc.oneof(fc.boolean(), fc.constant('true')),
        is_retryable: fc.boolean(),
        error: fc.oneof({ depthSize: 'small' }, tie('fields'), fc.string({ maxLength: 4 })),
        response: fc.record({ error: tie('fields') }),
        data: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    ),
    payload: fc.oneof(
      { weight: 8, arbitrary: tie('fields') },
      {
        weight: 2,
        arbitrary: tie('fields').map((fields) => {
          const copy = { ...fields };
          Object.defineProperty(copy, Symbol.for('vercel.ai.providerStreamError'), { value: true });
          return copy;
        }),
      },
      {
        weight: 2,
        arbitrary: fc.oneof(
          fc.string({ maxLength: 6 }),
          fc.integer(),
          fc.constantFrom(null, undefined, true),
        ),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(
            () => new Error('reset'),
            () =>
              new APICallError({
                message: 'gone',
                url: 'u',
                requestBodyValues: {},
                statusCode: 502,
              }),
            () => new StreamProviderError({ message: 'already', statusCode: 429 }),
          )
          .map((make) => make()),
      },
    ),
  }),
).payload;

test('an error part of any shape: the collector reports what streamText reported', async () => {
  await fc.assert(
    fc.asyncProperty(errorPayload, fc.boolean(), async (payload, finished) => {
      const parts = failingStream(payload, finished);
      const [reference] = await streamTextError(parts);
      assertSameError(collectorError(parts), reference, payload);
    }),
    { seed, numRuns: Number(process.env.RUNS ?? 300) },
  );
});
