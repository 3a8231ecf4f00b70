import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { streamText } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ModelCall, ModelCallSettings, ToolDefinition } from '../../src/loop/types.ts';
import { mockUsage } from '../support/mock-usage.ts';
import { recordsOf, withFreshSession } from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

/*
 * What an AI SDK user expects the loop to pass on: call settings, provider options and headers
 * (loop-wide, per backend, per call), a repair hook for malformed tool calls, and a caller's
 * abort signal — compared, for the settings, with what `streamText` itself sends the provider.
 */

const SETTINGS: ModelCallSettings = {
  maxOutputTokens: 321,
  temperature: 0.25,
  topP: 0.9,
  topK: 40,
  presencePenalty: 0.1,
  frequencyPenalty: 0.2,
  stopSequences: ['STOP'],
  seed: 7,
  headers: { 'x-team': 'agents' },
  providerOptions: { openai: { reasoningEffort: 'low' } },
};

const KEYS = [
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'stopSequences',
  'seed',
  'providerOptions',
] as const;

function settingsSent(options: LanguageModelV4CallOptions): Record<string, unknown> {
  const sent: Record<string, unknown> = {};
  for (const key of KEYS) sent[key] = options[key];
  sent.team = options.headers?.['x-team'];
  return sent;
}

function recordingModel(calls: LanguageModelV4CallOptions[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async (options) => {
      calls.push(options);
      return {
        stream: convertArrayToReadableStream([
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: mockUsage(1, 1),
          },
        ]),
      };
    },
  });
}

test('the call settings reach the provider as streamText sends them', () =>
  withFreshSession(async (fixture) => {
    const ours: LanguageModelV4CallOptions[] = [];
    const result = await new Loop({
      backends: [recordingModel(ours)],
      writer: fixture.session,
      callSettings: SETTINGS,
    }).start('Hi');
    assert.equal(result.status, 'finished');
    const theirs: LanguageModelV4CallOptions[] = [];
    const reference = streamText({
      model: recordingModel(theirs),
      prompt: 'Hi',
      maxRetries: 0,
      ...SETTINGS,
    });
    await reference.consumeStream();
    assert.equal(ours.length, 1);
    assert.equal(theirs.length, 1);
    assert.deepEqual(
      settingsSent(ours[0] as LanguageModelV4CallOptions),
      settingsSent(theirs[0] as LanguageModelV4CallOptions),
    );
    assert.equal(
      settingsSent(ours[0] as LanguageModelV4CallOptions).temperature,
      0.25,
      'really sent',
    );
  }));

test('per backend and per call: a backend’s settings over the loop’s, a call’s over the backend’s; headers and provider options merge', () =>
  withFreshSession(async (fixture) => {
    const first = new ScriptedModel([{ fail: 'http', status: 503 }], 'first');
    const second = new ScriptedModel([{ text: 'from the second' }], 'second');
    const asked: ModelCall[] = [];
    const result = await new Loop({
      backends: [
        first.model,
        {
          model: second.model,
          temperature: 1,
          headers: { 'x-backend': 'second' },
          providerOptions: { openai: { user: 'u-2' } },
        },
      ],
      writer: fixture.session,
      callSettings: {
        temperature: 0,
        maxOutputTokens: 100,
        headers: { 'x-team': 'agents' },
        providerOptions: { openai: { reasoningEffort: 'low' } },
      },
      prepareCall: (call) => {
        asked.push(call);
        return call.backend === 1 ? { seed: 42 } : undefined;
      },
      sleep: async () => undefined,
    }).start('Hi');
    assert.equal(result.status, 'finished');
    assert.deepEqual(asked, [
      { turn: 1, backend: 0, purpose: 'turn' },
      { turn: 1, backend: 1, purpose: 'turn' },
    ]);
    const toFirst = first.calls[0] as LanguageModelV4CallOptions;
    assert.deepEqual(
      [toFirst.temperature, toFirst.maxOutputTokens, toFirst.seed],
      [0, 100, undefined],
    );
    const toSecond = second.calls[0] as LanguageModelV4CallOptions;
    assert.deepEqual([toSecond.temperature, toSecond.maxOutputTokens, toSecond.seed], [1, 100, 42]);
    assert.deepEqual(toSecond.headers, { 'x-team': 'agents', 'x-backend': 'second' });
    assert.deepEqual(toSecond.providerOptions, { openai: { reasoningEffort: 'low', user: 'u-2' } });
  }));

test('repairToolCall mends a malformed call before it is recorded; one it leaves is answered with an error', () =>
  withFreshSession(async (fixture) => {
    const read: ToolDefinition<{ path: string }> = {
      name: 'read_file',
      description: 'Reads',
      inputSchema: z.object({ path: z.string() }),
      idempotency: 'read-only',
      execute: async ({ path }) => `contents of ${path}`,
    };
    const model = new ScriptedModel([
      {
        calls: [
          { id: 'c1', name: 'read', input: { file: 'a.md' } },
          { id: 'c2', name: 'delete_everything', input: {} },
        ],
      },
      { text: 'Done.' },
    ]);
    const seen: string[] = [];
    const result = await new Loop({
      backends: [model.model],
      writer: fixture.session,
      tools: [read as ToolDefinition<unknown>],
      repairToolCall: async (call) => {
        seen.push(`${call.toolName}: ${call.problem.slice(0, 30)} [${call.tools.join(',')}]`);
        if (call.toolName === 'read') return { toolName: 'read_file', input: { path: 'a.md' } };
        return null;
      },
    }).start('Read a.md');
    assert.equal(result.status, 'finished');
    assert.deepEqual(seen, [
      'read: There is no tool named "read". [read_file]',
      'delete_everything: There is no tool named "delete [read_file]',
    ]);
    const records = await recordsOf(fixture.path);
    const turn = records.find((record) => record.type === 'message' && record.role === 'assistant');
    assert.ok(turn?.type === 'message');
    assert.deepEqual(
      turn.content.map((part) => (part.type === 'tool-call' ? [part.toolName, part.input] : null)),
      [
        ['read_file', { path: 'a.md' }],
        ['delete_everything', {}],
      ],
      'the transcript holds the repaired call, and the one the hook left',
    );
    const results = records.flatMap((record) =>
      record.type === 'message' && record.role === 'tool'
        ? record.content.flatMap((part) =>
            part.type === 'tool-result' ? [[part.callId, part.isError, part.output]] : [],
          )
        : [],
    );
    const byCall = new Map(results.map((entry) => [entry[0], entry]));
    assert.deepEqual(byCall.get('c1'), ['c1', false, 'contents of a.md']);
    assert.equal(byCall.get('c2')?.[1], true, 'the call the hook left is refused');
  }));

test("a caller's signal aborts the run: stopped, with its reason", () =>
  withFreshSession(async (fixture) => {
    const controller = new AbortController();
    const model = new ScriptedModel([{ hang: true }]);
    const run = new Loop({
      backends: [model.model],
      writer: fixture.session,
      signal: controller.signal,
    }).start('Think');
    for await (const event of run)
      if (event.type === 'turn-start') controller.abort('deploy window closed');
    const result = await run;
    assert.equal(result.status, 'aborted');
    const stopped = (await recordsOf(fixture.path)).find((record) => record.type === 'run-stopped');
    assert.ok(stopped?.type === 'run-stopped');
    assert.equal(stopped.reason, 'deploy window closed');
  }));

test('a tracer gets a span per model call (ai.streamText.doStream) and per tool run (ai.toolCall), failures marked', () =>
  withFreshSession(async (fixture) => {
    const spans: {
      name: string;
      attributes: Record<string, unknown>;
      status?: number;
      ended: number;
    }[] = [];
    const tracer = {
      startSpan(
        name: string,
        options?: { attributes?: Record<string, string | number | boolean> },
      ) {
        const span = {
          name,
          attributes: { ...options?.attributes } as Record<string, unknown>,
          ended: 0,
        } as (typeof spans)[number];
        spans.push(span);
        return {
          setAttribute: (key: string, value: unknown) => {
            span.attributes[key] = value;
          },
          setStatus: (status: { code: number }) => {
            span.status = status.code;
          },
          end: () => {
            span.ended += 1;
          },
        };
      },
    };
    const failing = new ScriptedModel(
      [
        { fail: 'http', status: 503 },
        { fail: 'http', status: 503 },
      ],
      'down',
    );
    const model = new ScriptedModel(
      [{ calls: [{ id: 'c1', name: 'flaky', input: {} }] }, { text: 'Noted.' }],
      'up',
    );
    const flaky: ToolDefinition<Record<string, never>> = {
      name: 'flaky',
      description: 'Always fails',
      inputSchema: z.object({}),
      idempotency: 'read-only',
      execute: async () => {
        throw new Error('disk on fire');
      },
    };
    const result = await new Loop({
      backends: [failing.model, model.model],
      writer: fixture.session,
      tools: [flaky as ToolDefinition<unknown>],
      tracer,
      sleep: async () => undefined,
      backendRounds: 1,
    }).start('Try');
    assert.equal(result.status, 'finished');
    assert.deepEqual(
      spans.map((span) => [
        span.name,
        span.attributes['ai.model.id'] ?? span.attributes['ai.toolCall.name'],
        span.status ?? 0,
        span.ended,
      ]),
      [
        ['ai.streamText.doStream', 'down', 2, 1],
        ['ai.streamText.doStream', 'up', 0, 1],
        ['ai.toolCall', 'flaky', 2, 1],
        ['ai.streamText.doStream', 'down', 2, 1],
        ['ai.streamText.doStream', 'up', 0, 1],
      ],
    );
    assert.equal(spans[1]?.attributes['ai.response.finishReason'], 'tool-calls');
    assert.equal(typeof spans[1]?.attributes['ai.usage.inputTokens'], 'number');
  }));
